import { partHead, PART_TAIL, recordLine } from '../../src/search/search-record.js';

/** The fields a manifest opens with, as the export writes them: what says it is one, and of which format. */
export const MANIFEST_HEAD = {
  formatVersion: 1,
  tool: { name: 'rabbit-export', version: '1.0.0' },
  source: { baseUrl: 'https://rabbit.example' },
  startedAt: '2024-05-01T10:00:00.000Z',
  finishedAt: '2024-05-01T10:01:00.000Z',
  complete: true,
};

/**
 * A manifest that lists nothing, its head first: what an archive of crafted search parts holds so
 * that ls reads it, and search with it (which refuses an archive without a manifest, as ls does).
 */
export const BARE_MANIFEST = JSON.stringify({ ...MANIFEST_HEAD, prototypes: {}, files: [], errors: [] }, null, 2);

/** The search part of prototype 5, as the export writes one: its name "Shop", and an element's text "Coupon code". */
export const SHOP_PART = [
  partHead('5'),
  recordLine(
    { kind: 'prototype', field: 'name', page: '', layer: '', id: '', target: 'prototypes/5/index.html', text: 'Shop' },
    'shop',
  ),
  recordLine(
    {
      kind: 'element',
      field: 'text',
      page: 'p1',
      layer: '',
      id: 'e1',
      target: 'prototypes/5/index.html#page-p1',
      text: 'Coupon code',
    },
    'coupon code',
  ),
  PART_TAIL,
].join('');
