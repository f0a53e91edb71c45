import type { PathIds } from '../../src/api/entry-paths.js';

/** One id of each kind, of the service's shapes, for building and parsing names in tests. */
export const SAMPLE_IDS: Required<PathIds> = {
  prototype: '4711',
  page: 'page0001',
  layer: 'layer5',
  element: 'element9',
  discussion: '88',
};
