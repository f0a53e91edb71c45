import type { RabbitError } from '../core/errors.js';
import type { FetchContext } from '../client/fetch-resource.js';
import type { BodyRef } from '../storage/spool.js';
import type { Frontier } from '../crawl/frontier.js';
import type { ArchiveModel, StoredFile } from '../manifest/archive-model.js';
import { GENERATED_SOURCE, MANIFEST_PATH } from '../manifest/types.js';
import { collectAssets, type AssetCatalog } from '../assets/collect-assets.js';
import type { AssetLimits } from '../assets/asset-types.js';
import type { ServiceLocation } from '../assets/resolve-ref.js';
import { readArchiveData } from './archive-data.js';
import { INDEX_PATH, renderIndex } from './index-html.js';
import { buildPageViews, type GeneratedFile } from './page-views.js';

export interface OfflineViewerOptions {
  fetch: FetchContext;
  frontier: Frontier;
  model: ArchiveModel;
  service: ServiceLocation;
  /** The base URL as given, for the overview's heading. */
  baseUrl: string;
  /** False when page renderings were not exported: no assets and no viewable copies then. */
  pages: boolean;
  limits?: Partial<AssetLimits>;
  onFailed?(source: string, error: RabbitError): void;
}

/**
 * Makes the archive browsable offline (issue 5): fetches the page requisites, writes a viewable
 * copy of every page and stylesheet that needs one, and index.html at the root. Everything made
 * here is stored through the spool and listed in the manifest as generated, so `verify` checks it
 * like any other entry. Runs after the crawl has drained, before the manifest is built.
 */
export async function addOfflineViewer(options: OfflineViewerOptions): Promise<void> {
  const { model } = options;
  const read = (ref: BodyRef): Promise<Buffer> => options.fetch.spool.read(ref);
  if (options.pages) {
    const catalog = await collectAssets({
      fetch: options.fetch,
      frontier: options.frontier,
      model,
      service: options.service,
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.onFailed ? { onFailed: options.onFailed } : {}),
    });
    model.foreignReferences.push(...foreignList(catalog));
    for (const view of await buildPageViews(model.allFiles(), catalog, options.service, read)) await store(options, view);
  }
  const prototypes = await readArchiveData(model.allFiles(), model.errors, read);
  const index = renderIndex({ baseUrl: options.baseUrl, prototypes, errors: model.errors });
  await store(options, { path: INDEX_PATH, data: Buffer.from(index, 'utf8'), contentType: 'text/html; charset=utf-8', generatedFrom: MANIFEST_PATH });
}

async function store(options: OfflineViewerOptions, generated: GeneratedFile): Promise<void> {
  const body = await options.fetch.spool.write(once(generated.data), { maxBytes: Number.MAX_SAFE_INTEGER, source: generated.path });
  const file: StoredFile = {
    path: generated.path,
    source: GENERATED_SOURCE,
    sha256: body.sha256,
    size: body.size,
    contentType: generated.contentType,
    lastModified: null,
    file: body.file,
    ...(body.offset !== undefined ? { offset: body.offset } : {}),
    generatedFrom: generated.generatedFrom,
  };
  const owner = /^prototypes\/(\d+)\//.exec(generated.path)?.[1];
  options.model.addFile(owner !== undefined && options.model.hasPrototype(owner) ? owner : undefined, file);
}

async function* once(data: Buffer): AsyncGenerator<Buffer> {
  yield data;
}

function foreignList(catalog: AssetCatalog): { url: string; referencedBy: string[] }[] {
  return [...catalog.foreign]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([url, referrers]) => ({ url, referencedBy: [...referrers].sort() }));
}
