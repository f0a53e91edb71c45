import type { DatasetOptions } from './model.js';
import { DEFAULT_DATASET } from './model.js';
import { API_ROOT } from './routes.js';
import { STATIC_PATHS } from './static-assets.js';
import { FakeStore } from './store.js';

/**
 * How big an account is, counted the way an exporter sees it: one resource per request a full
 * export with the account-wide key makes. The benchmark's bare client fetches exactly these paths.
 */
export function* exportPaths(store: FakeStore): Generator<string> {
  yield `${API_ROOT}prototypes.json`;
  let anyPage = false;
  for (const id of store.prototypeIds()) {
    const base = `${API_ROOT}prototypes/${id}`;
    const head = store.head(id);
    if (head === undefined) continue;
    yield `${base}.json`;
    yield `${base}/pages.json`;
    yield `${base}/layers.json`;
    yield `${base}/discussions.json`;
    for (const pageId of store.pageIds(id) ?? []) {
      anyPage = true;
      const page = `${base}/pages/${pageId}`;
      yield `${page}.json`;
      yield `${page}.html`;
      yield `${page}.png`;
      yield `${page}/elements.json`;
      yield `${page}/discussions.json`;
      for (const element of store.pageElementIds(id, pageId) ?? []) yield `${page}/elements/${element}.json`;
    }
    for (const layer of head.layers) {
      yield `${base}/layers/${layer.id}.json`;
      yield `${base}/layers/${layer.id}/elements.json`;
      for (const element of layer.elements) yield `${base}/layers/${layer.id}/elements/${element.id}.json`;
    }
    // Every discussion is on one of the prototype's pages, so the lists name the same ids.
    for (const discussion of head.discussions) yield `${base}/discussions/${discussion.id}.json`;
  }
  // The XHTML and its stylesheet point at every static file; they are fetched once, without a key.
  if (anyPage) yield* Object.values(STATIC_PATHS);
}

/** As many as `exportPaths` yields, counted without building a million strings. */
export function countExportRequests(store: FakeStore): number {
  let count = 1;
  let anyPage = false;
  for (const id of store.prototypeIds()) {
    const head = store.head(id);
    if (head === undefined) continue;
    count += 4 + head.discussions.length;
    for (const pageId of store.pageIds(id) ?? []) {
      anyPage = true;
      count += 5 + (store.pageElementCount(id, pageId) ?? 0);
    }
    for (const layer of head.layers) count += 2 + layer.elements.length;
  }
  return count + (anyPage ? Object.keys(STATIC_PATHS).length : 0);
}

/**
 * The shape of a big account as users with a million resources describe theirs: prototypes of
 * 100 pages with 100 elements each, two layers, three discussions, 64x48 PNGs.
 */
export const SCALE_SHAPE: Readonly<Omit<DatasetOptions, 'prototypes'>> = {
  ...DEFAULT_DATASET,
  pagesPerPrototype: 100,
  elementsPerPage: 100,
  layersPerPrototype: 2,
  elementsPerLayer: 3,
  discussionsPerPrototype: 3,
  pngWidth: 64,
  pngHeight: 48,
};

/**
 * An account of `shape` as close to `target` resources as whole pages allow. Without a fixed
 * number of prototypes, as many as fit whole (at least one), then their pages chosen so the sum
 * comes close: `--resources 3000` is one prototype of about 28 pages, not one of 100 (10,500).
 * With `shape.prototypes`, that many prototypes of as many pages as it takes: one prototype of
 * 250,000 resources is about 2,400 pages of 100 elements. A target below one page's worth gets
 * one page with fewer elements.
 */
export function datasetForResources(
  target: number,
  shape: Partial<Omit<DatasetOptions, 'prototypes'>> & { prototypes?: number } = {},
): DatasetOptions {
  const { prototypes: fixedCount, ...rest } = shape;
  const full = { ...SCALE_SHAPE, ...rest };
  const count = (options: Partial<DatasetOptions>): number =>
    countExportRequests(new FakeStore(1, { ...full, prototypes: 1, ...options }, () => 0));
  let prototypes = fixedCount;
  if (prototypes === undefined) {
    const fixed = count({ prototypes: 0 });
    const one = count({ prototypes: 1 }) - fixed;
    prototypes = one > 0 ? Math.max(1, Math.round((target - fixed) / one)) : 1;
  }
  // Static assets and discussions come with the first page, so the cost of one more page is taken past it.
  const onePage = count({ prototypes, pagesPerPrototype: 1 });
  const page = count({ prototypes, pagesPerPrototype: 2 }) - onePage;
  const pages = page > 0 ? Math.max(1, Math.round((target - onePage) / page) + 1) : 1;
  if (pages > 1 || onePage <= target || fixedCount !== undefined)
    return { ...full, prototypes, pagesPerPrototype: pages };
  // Less than one page of the shape: one page, with as many fewer elements as the target is short.
  const elements = Math.max(0, full.elementsPerPage - (onePage - target));
  return { ...full, prototypes, pagesPerPrototype: 1, elementsPerPage: elements };
}
