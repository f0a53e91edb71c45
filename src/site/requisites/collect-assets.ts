import { RabbitError, isRabbitError } from '../../core/errors.js';
import { API_PREFIX, entryKindOf, type EntryName } from '../../api/paths.js';
import type { FileEntry } from '../../manifest/types.js';
import { fetchResource, type FetchContext } from '../../crawl/fetch-resource.js';
import { sourceProblem } from '../../manifest/manifest-values.js';
import { manifestErrorOf } from '../../manifest/manifest-error.js';
import { cachedBodyOf, storedFileOf } from '../../storage/stored-file.js';
import type { Frontier } from '../../crawl/frontier.js';
import type { ArchiveModel, ArchivedEntry } from '../../manifest/archive-model.js';
import type { StoredFile } from '../../storage/stored-file.js';
import { ASSET_LIMITS, assetPath, isCss, type AssetLimits } from './asset-types.js';
import { scanCss } from './css-refs.js';
import { scanHtml } from './html-refs.js';
import { resolveReference, serviceUrl, type Resolution, type ServiceLocation } from './resolve-ref.js';

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

/**
 * Points the catalog's archived files at one prototype's API resources (and those outside any
 * prototype). Only API resources: a page asset is found by its request in `assets`, never by a
 * path it shares with another request's copy (`logo.png?v=2` is not `logo.png?v=1`).
 */
export function setArchived(catalog: AssetCatalog, top: readonly FileEntry[], files: readonly FileEntry[]): void {
  catalog.archived.clear();
  for (const file of top) if (file.source.startsWith(API_PREFIX)) catalog.archived.set(file.source, file.path);
  for (const file of files) if (file.source.startsWith(API_PREFIX)) catalog.archived.set(file.source, file.path);
}

/**
 * What the offline viewer reads of a prototype: everything but the element bodies, which are most
 * of an account and which neither the pages, their requisites nor the overview need.
 */
export const VIEWER_READS = { elementBodies: false } as const;

/** A raw page rendering, as the crawl archives it. */
export function isPageHtml(file: EntryName): boolean {
  return entryKindOf(file) === 'page-html';
}

/** The archive entry a reference resolves to, or undefined when the archive does not hold it. */
export function localPathOf(catalog: AssetCatalog, resolution: Resolution): string | undefined {
  if (resolution.kind !== 'service') return undefined;
  return catalog.assets.get(resolution.request)?.path ?? catalog.archived.get(resolution.source);
}

export interface PageRequisitesOptions {
  /** The crawl's fetch context: same client, spool, retry policy, signal and counters. */
  fetch: FetchContext;
  /** The crawl's frontier: assets go through the same single limiter as the crawl. */
  frontier: Frontier;
  model: ArchiveModel;
  service: ServiceLocation;
  limits?: Partial<AssetLimits>;
  onFailed?(source: string, error: RabbitError): void;
  /** Every asset asked for so far has been fetched or has failed, its own references included. */
  onSettled?(): void;
}

type ServiceAsset = Extract<Resolution, { kind: 'service' }>;

/**
 * Fetches the page requisites of every archived page rendering: each stylesheet, image and icon on
 * the service host once (deduplicated by URL), stylesheets followed into their own `url()` and
 * `@import` references. Assets are requested without the api_key and stored content-addressed
 * under `assets/`. A failed asset is a recorded error, so the archive says it is incomplete: its
 * viewable pages would be missing a part. Fatal failures (disk full, interruption) propagate.
 *
 * Pages are scanned as the crawl stores them (`pageStored`), so their requisites are fetched on the
 * same frontier while the crawl runs rather than in a serial phase after it. What cannot be decided
 * then waits for `finish`, after the crawl: a reference to an API resource may name something the
 * crawl archives, which needs no fetch, and that is known only once the crawl is over.
 *
 * While no asset is outstanding (`settled`), every reference of every page scanned so far is
 * decided for good: fetched into the catalog, or failed and never asked for again. The offline
 * viewer builds a prototype's copies during the crawl only then.
 */
export class PageRequisites {
  private readonly limits: AssetLimits;
  /** What has been fetched so far; `archived` is set only while `finish` works on a prototype. */
  readonly catalog: AssetCatalog = { assets: new Map(), archived: new Map(), foreign: new Map() };
  private readonly requested = new Set<string>();
  /**
   * Fetched assets by entry name: two URLs serving the same bytes as the same type make one entry,
   * which the archive holds once (the zip writer refuses a name twice).
   */
  private readonly byPath = new Map<string, StoredFile>();
  /** URLs on the service's host outside its base path, recorded as missing once each. */
  private readonly outsideReported = new Set<string>();
  /** Scheduled but not started: what a halted frontier dropped is recorded as missing. */
  private readonly waiting = new Map<string, string>();
  private capReported = false;
  /** Prototypes with a page `finish` must read again: not in memory, or naming an API resource. */
  private readonly rescan = new Set<string>();
  /** Assets scheduled and not yet ended, the ones a stylesheet names while it is scanned included. */
  private outstanding = 0;

  constructor(private readonly options: PageRequisitesOptions) {
    this.limits = { ...ASSET_LIMITS, ...options.limits };
  }

  /**
   * The crawl stored a body. A page rendering still in memory is scanned now; one that is not (a
   * large page, a copy reused from an earlier run) is read back by `finish`. No body is kept.
   */
  pageStored(file: StoredFile, prototypeId: string): void {
    if (!isPageHtml(file) || !file.source.startsWith(API_PREFIX)) return;
    if (!file.data) {
      this.rescan.add(prototypeId);
      return;
    }
    if (this.scanPage(file, file.data.toString('latin1'), true)) this.rescan.add(prototypeId);
  }

  /** The prototype's pages were all scanned as the crawl stored them (true for one without pages). */
  scannedWhole(prototypeId: string): boolean {
    return !this.rescan.has(prototypeId);
  }

  /** No asset is being fetched or waiting to be: what the pages scanned so far need is decided. */
  get settled(): boolean {
    return this.outstanding === 0;
  }

  /**
   * After the crawl has drained: scans the pages the crawl could not (or not completely), one
   * prototype at a time with its archived files at hand, and fetches what they still need. Returns
   * the catalog for the viewer, with nothing in `archived`.
   */
  async finish(locate: (entry: ArchivedEntry) => StoredFile): Promise<AssetCatalog> {
    const { model } = this.options;
    const top = await model.files(undefined);
    for (const id of model.prototypeIds()) {
      if (!this.rescan.has(id)) continue;
      const files = await model.files(id, VIEWER_READS);
      setArchived(this.catalog, top, files);
      for (const page of files.filter(isPageHtml)) {
        if (!page.source.startsWith(API_PREFIX)) continue;
        this.scanPage(page, (await this.options.fetch.spool.read(locate(page))).toString('latin1'), false);
      }
      // Fetch this prototype's requisites before reading the next one's pages: the frontier stays
      // small and the stylesheets found are followed while their pages are still at hand.
      await this.options.frontier.drain();
    }
    this.catalog.archived.clear();
    // Scheduled during the crawl and dropped unstarted when --max-duration halted the frontier.
    for (const source of this.waiting.values()) this.deadline(source);
    this.waiting.clear();
    return this.catalog;
  }

  /** Follows a page's references; true when some were left for `finish` (during the crawl). */
  private scanPage(page: { path: string; source: string }, html: string, crawling: boolean): boolean {
    const base = serviceUrl(this.options.service, page.source);
    let deferred = false;
    for (const ref of scanHtml(html)) {
      if (ref.kind === 'link') continue;
      const resolution = resolveReference(ref.value, base, this.options.service);
      if (crawling && resolution.kind === 'service' && resolution.source.startsWith(API_PREFIX)) {
        // Whether the crawl archives it is not known yet.
        deferred = true;
        continue;
      }
      this.follow(resolution, page.path, ref.kind === 'stylesheet', 1);
    }
    return deferred;
  }

  private follow(resolution: Resolution, referrer: string, stylesheet: boolean, depth: number): void {
    const { catalog, limits, requested } = this;
    if (resolution.kind === 'foreign') {
      const referrers = catalog.foreign.get(resolution.url) ?? new Set<string>();
      referrers.add(referrer);
      catalog.foreign.set(resolution.url, referrers);
      if (resolution.servicePath !== undefined) this.outside(resolution.servicePath, resolution.url);
    }
    if (resolution.kind !== 'service' || requested.has(resolution.request)) return;
    if (catalog.archived.has(resolution.source) && !resolution.request.includes('?')) return;
    const unfit = sourceProblem(resolution.source);
    if (unfit !== undefined) {
      // The manifest could not list it: every reader refuses such a source, so the archive would
      // fail its own verify. Recorded instead, in words a reader accepts.
      requested.add(resolution.request);
      this.fail(
        resolution.source,
        new RabbitError('BAD_SHAPE', `a page asset whose path ${unfit} is not archived`, { source: resolution.source }),
      );
      return;
    }
    if (stylesheet && depth > limits.maxCssDepth) {
      requested.add(resolution.request);
      this.fail(
        resolution.source,
        new RabbitError(
          'BAD_SHAPE',
          `${resolution.source}: stylesheets nested deeper than ${limits.maxCssDepth} levels are not followed`,
          { source: resolution.source },
        ),
      );
      return;
    }
    if (requested.size >= limits.maxAssets) {
      if (!this.capReported) {
        this.capReported = true;
        this.fail(
          resolution.source,
          new RabbitError('BAD_SHAPE', `more than ${limits.maxAssets} page assets: the rest were not fetched`, {
            source: resolution.source,
          }),
        );
      }
      return;
    }
    requested.add(resolution.request);
    if (this.options.frontier.halted) return this.deadline(resolution.source);
    this.waiting.set(resolution.request, resolution.source);
    // Counted until the task ends, so a stylesheet's own references are counted before it stops
    // being. A task the frontier drops (halted, stopped) never ends: nothing is settled after that.
    this.outstanding++;
    this.options.frontier.add(async () => {
      this.waiting.delete(resolution.request);
      await this.fetchAsset(resolution, depth);
      if (--this.outstanding === 0) this.options.onSettled?.();
    });
  }

  private async fetchAsset(asset: ServiceAsset, depth: number): Promise<void> {
    const { fetch, model, service } = this.options;
    let stored: StoredFile;
    try {
      const result = await fetchResource(fetch, {
        source: asset.request,
        key: '',
        maxBytes: this.limits.maxBytes,
        keep: false,
        anonymous: true,
      });
      if (result.status !== 200)
        throw new RabbitError('HTTP_STATUS', `GET ${asset.source} answered 304 unasked`, { source: asset.source });
      // Without the body's bytes: the catalog keeps every asset's record until the run ends.
      stored = storedFileOf(
        { path: assetPath(result.body.sha256, result.contentType), source: asset.source },
        cachedBodyOf(result.body, result),
      );
    } catch (error) {
      if (isRabbitError(error) && error.errorClass !== 'fatal') return this.fail(asset.source, error);
      throw error;
    }
    const same = this.byPath.get(stored.path);
    if (same !== undefined) {
      // Already stored, and a stylesheet already followed: this URL is found by its request too.
      this.catalog.assets.set(asset.request, same);
      return;
    }
    this.byPath.set(stored.path, stored);
    model.addFile(undefined, stored);
    this.catalog.assets.set(asset.request, stored);
    if (!isCss(stored.contentType)) return;
    if (stored.size > this.limits.maxCssBytes) {
      return this.fail(
        asset.source,
        new RabbitError(
          'BODY_TOO_LARGE',
          `${asset.source}: stylesheet of ${stored.size} bytes is too large to scan for its references`,
          { source: asset.source },
        ),
      );
    }
    const css = (await fetch.spool.read(stored)).toString('latin1');
    const base = serviceUrl(service, asset.request);
    for (const ref of scanCss(css))
      this.follow(resolveReference(ref.value, base, service), stored.path, ref.kind === 'import', depth + 1);
  }

  /**
   * An asset on the service's own host outside its base path: the page needs it and it cannot be
   * fetched, so the archive is not complete (recorded once per URL).
   */
  private outside(path: string, url: string): void {
    if (this.outsideReported.has(url)) return;
    this.outsideReported.add(url);
    this.fail(
      path,
      new RabbitError('BAD_SHAPE', `${path} is on the service's host outside its base path: it was not fetched`, {
        source: path,
      }),
    );
  }

  /** --max-duration (or an outage past its patience) stopped the fetching: the asset is missing, and the archive says so. */
  private deadline(source: string): void {
    const reason = this.options.frontier.haltedBy;
    const [code, why] = isRabbitError(reason)
      ? [reason.code, reason.message]
      : (['DEADLINE', 'the run reached --max-duration'] as const);
    this.fail(source, new RabbitError(code, `${source} was not fetched: ${why}`, { source }));
  }

  private fail(source: string, error: RabbitError): void {
    // fetchResource names the request, query included; manifestErrorOf keeps only paths.
    this.options.model.addError(manifestErrorOf(source, error));
    this.options.onFailed?.(source, error);
  }
}
