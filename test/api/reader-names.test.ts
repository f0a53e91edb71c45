import { describe, expect, it } from 'vitest';
import { SAMPLE_IDS } from './sample-ids.js';
import {
  elementEntriesIn,
  elementEntriesOf,
  elementFolderOf,
  elementSourcesOf,
  entryNameOf,
  entryPathOf,
  prototypeSourceFolderOf,
  revisionEntryNameOf,
  revisionFolderOf,
  sourceNameOf,
  sourceOf,
  type PathIds,
} from '../../src/api/entry-paths.js';
import { KIND_NAMES, RESOURCE_KINDS, type KindName } from '../../src/api/resource-kinds.js';

const IDS = SAMPLE_IDS;

const badId = expect.objectContaining({ code: 'BAD_ID' });

describe('names for readers', () => {
  it.each(KIND_NAMES)('%s: the same entry name as the export builds, for ids of the service shape', (kind) => {
    expect(entryNameOf(kind, { ...IDS, key: 2 }, 17)).toBe(entryPathOf(kind, { ...IDS, key: 2 }, 17));
  });

  it.each(KIND_NAMES.filter((kind) => RESOURCE_KINDS[kind].api !== null))(
    '%s: the same source as the export builds',
    (kind) => {
      expect(sourceNameOf(kind, IDS)).toBe(sourceOf(kind, IDS));
    },
  );

  it.each(KIND_NAMES.filter((kind) => RESOURCE_KINDS[kind].scope === 'revision'))(
    '%s: its name below the revision folder joins that folder into its entry name',
    (kind) => {
      expect(revisionFolderOf(IDS.prototype, 17) + revisionEntryNameOf(kind, IDS)).toBe(entryPathOf(kind, IDS, 17));
    },
  );

  it.each<[KindName, PathIds, string]>([
    ['page', { prototype: '4711', page: 'PAGE1' }, 'prototypes/4711/r17/pages/PAGE1.json'],
    ['page', { prototype: '4711', page: 'page_1-x' }, 'prototypes/4711/r17/pages/page_1-x.json'],
    ['discussion', { prototype: '0042', discussion: '1e3' }, 'prototypes/0042/r17/discussions/1e3.json'],
    [
      'layer',
      { prototype: '4711', layer: `layer${'1'.repeat(40)}` },
      `prototypes/4711/r17/layers/layer${'1'.repeat(40)}.json`,
    ],
    ['page-element', { prototype: '4711', page: 'p', element: 'é' }, 'prototypes/4711/r17/pages/p/elements/é.json'],
  ])('names a %s by ids the service shape refuses: %j', (kind, ids, name) => {
    expect(() => entryPathOf(kind, ids, 17)).toThrow(badId);
    expect(entryNameOf(kind, ids, 17)).toBe(name);
  });

  it.each([
    '',
    '.',
    '..',
    'a/b',
    '../x',
    'a\\b',
    'a?b',
    'a#b',
    '%2e%2e',
    'a\u0000b',
    'a\nb',
    'a\u007fb',
    'a\u0085b',
    'x'.repeat(256),
  ])('refuses the id %j in every builder', (id) => {
    expect(() => entryNameOf('page', { prototype: '1', page: id }, 1)).toThrow(badId);
    expect(() => entryNameOf('page', { prototype: id, page: 'page1' }, 1)).toThrow(badId);
    expect(() => entryNameOf('page', { prototype: '1', page: 'page1' }, id)).toThrow(badId);
    expect(() => revisionEntryNameOf('discussion', { discussion: id })).toThrow(badId);
    expect(() => revisionFolderOf(id, 1)).toThrow(badId);
    expect(() => sourceNameOf('layer', { prototype: '1', layer: id })).toThrow(badId);
    expect(() => prototypeSourceFolderOf(id)).toThrow(badId);
    expect(() => elementFolderOf('layer', id)).toThrow(badId);
    expect(() => elementEntriesOf('page', 'page1').element(id)).toThrow(badId);
    expect(() => elementSourcesOf('1', 'page', id)).toThrow(badId);
  });

  it('refuses a name whose ids are missing, and a source for what the service does not serve', () => {
    expect(() => entryNameOf('page', { prototype: '1' }, 1)).toThrow(badId);
    expect(() => entryNameOf('page', { prototype: '1', page: 'page1' })).toThrow(badId);
    expect(() => sourceNameOf('page-view', IDS)).toThrow(badId);
    expect(() => sourceNameOf('key-list', { key: 2 })).toThrow(badId);
  });

  it('names the folders of a revision and of a prototype on the service', () => {
    expect(revisionFolderOf('4711', 17)).toBe('prototypes/4711/r17/');
    expect(prototypeSourceFolderOf('4711')).toBe('/rabbit/api/prototypes/4711/');
    expect(sourceNameOf('page-sketched', IDS)).toBe('/rabbit/api/prototypes/4711/pages/page0001.xhtml?mode=sketched');
  });

  it('names the entries of the elements on a page or layer, from the parent or from its folder', () => {
    expect(elementFolderOf('page', 'page1')).toBe('pages/page1');
    expect(elementFolderOf('layer', 'layer2')).toBe('layers/layer2');
    for (const [parent, id] of [
      ['page', 'page1'],
      ['layer', 'layer2'],
    ] as const) {
      const names = elementEntriesOf(parent, id);
      expect(names.list).toBe(revisionEntryNameOf(`${parent}-element-list`, { [parent]: id }));
      expect(names.element('element3')).toBe(
        revisionEntryNameOf(`${parent}-element`, { [parent]: id, element: 'element3' }),
      );
      const byFolder = elementEntriesIn(elementFolderOf(parent, id));
      expect(byFolder?.list).toBe(names.list);
      expect(byFolder?.element('element3')).toBe(names.element('element3'));
    }
  });

  it.each([
    'pages',
    'pages/',
    'discussions/88',
    'prototypes/4711',
    'pages/a/b',
    'pages/..',
    'layers/.',
    '{page}/x',
    'page1',
  ])('finds no elements in the folder %j', (folder) => {
    expect(elementEntriesIn(folder)).toBeUndefined();
  });

  it('names the sources of the elements on a page or layer, with the bare form the service deletes', () => {
    const page = elementSourcesOf('4711', 'page', 'page1');
    expect(page.list).toBe(sourceOf('page-element-list', { prototype: '4711', page: 'page1' }));
    expect(page.element('element3')).toBe(
      sourceOf('page-element', { prototype: '4711', page: 'page1', element: 'element3' }),
    );
    expect(page.bare('element3')).toBe('/rabbit/api/prototypes/4711/pages/page1/elements/element3');
    const layer = elementSourcesOf('4711', 'layer', 'layer2');
    expect(layer.bare('element3')).toBe('/rabbit/api/prototypes/4711/layers/layer2/elements/element3');
  });
});
