import { RabbitError, isRabbitError } from '../core/errors.js';
import { API_PREFIX } from '../archive/paths.js';
import type { FileEntry } from '../manifest/types.js';
import { fetchResource, type FetchContext } from '../client/fetch-resource.js';
import { manifestErrorOf } from '../manifest/manifest-error.js';
import { cachedBodyOf, storedFileOf } from '../storage/stored-file.js';
import type { Frontier } from '../crawl/frontier.js';
import type { ArchiveModel, ArchivedEntry, StoredFile } from '../manifest/archive-model.js';
import { ASSET_LIMITS, assetPath, isCss, type AssetLimits } from './asset-types.js';
import { scanCss } from './css-refs.js';
import { scanHtml } from './html-refs.js';
import { resolveReference, serviceUrl, type Resolution, type ServiceLocation } from './resolve-ref.js';

export interface CollectAssetsOptions {
  /** The crawl's fetch context: same client, spool, retry policy, signal and counters. */
  fetch: FetchContext;
  /** The crawl's frontier, drained: assets go through the same single limiter. */
  frontier: Frontier;
  model: ArchiveModel;
  /** Where a body the model lists is in the spool. */
  locate: (entry: ArchivedEntry) => StoredFile;
  service: ServiceLocation;
  limits?: Partial<AssetLimits>;
  onFailed?(source: string, error: RabbitError): void;
}

/** What the archive holds for each reference on the service host, for the viewer to rewrite with. */
export interface AssetCatalog {
  /** Fetched assets by request (path and query below the base path). */
  assets: Map<string, StoredFile>;
  /**
   * The archived files of the prototype being worked on (and those outside any prototype) by
   * source, so a page referring to an archived API resource needs no fetch. One prototype's at a
   * time: an account's worth would not fit in memory.
   */
  archived: Map<string, string>;
  /** References to other hosts: URL to the archive paths of the pages or stylesheets naming them. */
  foreign: Map<string, Set<string>>;
}

/** Points the catalog's archived files at one prototype's (and those outside any prototype). */
export function setArchived(catalog: AssetCatalog, top: readonly FileEntry[], files: readonly FileEntry[]): void {
  catalog.archived.clear();
  for (const file of top) catalog.archived.set(file.source, file.path);
  for (const file of files) catalog.archived.set(file.source, file.path);
}

/**
 * What the offline viewer reads of a prototype: everything but the element bodies, which are most
 * of an account and which neither the pages, their requisites nor the overview need.
 */
export function viewerReads(path: string): boolean {
  return !ELEMENT_BODY.test(path);
}

const ELEMENT_BODY = /\/elements\/[^/]+\.json$/;

/** A raw page rendering, as the crawl archives it. */
export function isPageHtml(file: FileEntry): boolean {
  return /^prototypes\/\d+\/r\d+\/pages\/[^/]+\.html$/.test(file.path) && !file.path.endsWith('.view.html');
}

/** The archive entry a reference resolves to, or undefined when the archive does not hold it. */
export function localPathOf(catalog: AssetCatalog, resolution: Resolution): string | undefined {
  if (resolution.kind !== 'service') return undefined;
  return catalog.assets.get(resolution.request)?.path ?? catalog.archived.get(resolution.source);
}

/**
 * Fetches the page requisites of every archived page rendering: each stylesheet, image and icon on
 * the service host once (deduplicated by URL), stylesheets followed into their own `url()` and
 * `@import` references. Assets are requested without the api_key and stored content-addressed
 * under `assets/`. A failed asset is a recorded error, so the archive says it is incomplete: its
 * viewable pages would be missing a part. Fatal failures (disk full, interruption) propagate.
 */
export async function collectAssets(options: CollectAssetsOptions): Promise<AssetCatalog> {
  const limits = { ...ASSET_LIMITS, ...options.limits };
  const { model, service } = options;
  const catalog: AssetCatalog = { assets: new Map(), archived: new Map(), foreign: new Map() };
  const requested = new Set<string>();
  let capReported = false;

  const fail = (source: string, error: RabbitError): void => {
    // fetchResource names the request, query included; manifestErrorOf keeps only paths.
    model.addError(manifestErrorOf(source, error));
    options.onFailed?.(source, error);
  };

  const follow = (value: string, base: string, referrer: string, stylesheet: boolean, depth: number): void => {
    const resolution = resolveReference(value, base, service);
    if (resolution.kind === 'foreign') {
      const referrers = catalog.foreign.get(resolution.url) ?? new Set<string>();
      referrers.add(referrer);
      catalog.foreign.set(resolution.url, referrers);
    }
    if (resolution.kind !== 'service' || requested.has(resolution.request)) return;
    if (catalog.archived.has(resolution.source) && !resolution.request.includes('?')) return;
    if (stylesheet && depth > limits.maxCssDepth) {
      requested.add(resolution.request);
      fail(resolution.source, new RabbitError('BAD_SHAPE', `${resolution.source}: stylesheets nested deeper than ${limits.maxCssDepth} levels are not followed`, { source: resolution.source }));
      return;
    }
    if (requested.size >= limits.maxAssets) {
      if (!capReported) {
        capReported = true;
        fail(resolution.source, new RabbitError('BAD_SHAPE', `more than ${limits.maxAssets} page assets: the rest were not fetched`, { source: resolution.source }));
      }
      return;
    }
    requested.add(resolution.request);
    if (options.frontier.halted) {
      // --max-duration stopped the fetching: the asset is missing, and the archive says so.
      fail(resolution.source, new RabbitError('DEADLINE', `${resolution.source} was not fetched: the run reached --max-duration`, { source: resolution.source }));
      return;
    }
    options.frontier.add(() => fetchAsset(resolution, depth));
  };

  const fetchAsset = async (asset: Extract<Resolution, { kind: 'service' }>, depth: number): Promise<void> => {
    let stored: StoredFile;
    try {
      const result = await fetchResource(options.fetch, { source: asset.request, key: '', maxBytes: limits.maxBytes, keep: false, anonymous: true });
      if (result.status !== 200) throw new RabbitError('HTTP_STATUS', `GET ${asset.source} answered 304 unasked`, { source: asset.source });
      // Without the body's bytes: the catalog keeps every asset's record until the run ends.
      stored = storedFileOf({ path: assetPath(result.body.sha256, result.contentType), source: asset.source }, cachedBodyOf(result.body, result));
    } catch (error) {
      if (isRabbitError(error) && error.errorClass !== 'fatal') return fail(asset.source, error);
      throw error;
    }
    model.addFile(undefined, stored);
    catalog.assets.set(asset.request, stored);
    if (!isCss(stored.contentType)) return;
    if (stored.size > limits.maxCssBytes) {
      return fail(asset.source, new RabbitError('BODY_TOO_LARGE', `${asset.source}: stylesheet of ${stored.size} bytes is too large to scan for its references`, { source: asset.source }));
    }
    const css = (await options.fetch.spool.read(stored)).toString('latin1');
    const base = serviceUrl(service, asset.request);
    for (const ref of scanCss(css)) follow(ref.value, base, stored.path, ref.kind === 'import', depth + 1);
  };

  const top = await model.files(undefined);
  for (const id of model.prototypeIds()) {
    const files = await model.files(id, viewerReads);
    setArchived(catalog, top, files);
    for (const page of files.filter(isPageHtml)) {
      if (!page.source.startsWith(API_PREFIX)) continue;
      const html = (await options.fetch.spool.read(options.locate(page))).toString('latin1');
      const base = serviceUrl(service, page.source);
      for (const ref of scanHtml(html)) {
        if (ref.kind !== 'link') follow(ref.value, base, page.path, ref.kind === 'stylesheet', 1);
      }
    }
    // Fetch this prototype's requisites before reading the next one's pages: the frontier stays
    // small and the stylesheets found are followed while their pages are still at hand.
    await options.frontier.drain();
  }
  catalog.archived.clear();
  return catalog;
}
