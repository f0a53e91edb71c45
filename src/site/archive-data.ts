import type { BodyReader, BodyRef } from '../storage/spool.js';
import type { StoredFile } from '../storage/stored-file.js';
import { compareIds } from '../api/ids.js';
import { inOrder } from '../core/in-order.js';
import { jsonText } from '../api/json-body.js';
import { archivedIdsOf } from '../api/archived-ids.js';
import { parseEntryPath, revisionEntryNameOf, revisionFolderOf } from '../api/entry-paths.js';

/**
 * What index.html shows, read back from the archived bodies themselves (not from the crawl's
 * memory), so the overview shows exactly what the archive holds. Bodies are the service's text:
 * every field is checked for its type and anything odd shows as missing rather than failing.
 */
export interface PrototypeSummary {
  id: string;
  revision: string;
  name: string | null;
  lastModification: number | null;
  lastUser: string | null;
  milestones: { revision: number; name: string; created: number | null; user: string | null }[];
  pages: PageSummary[];
  layers: { id: string; name: string | null; elementCount: number | null }[];
  /** Discussions whose page is not among the archived pages. */
  otherDiscussions: DiscussionSummary[];
  complete: boolean;
}

export interface PageSummary {
  id: string;
  name: string | null;
  layerNames: string[];
  elementCount: number | null;
  png?: { path: string; width: number; height: number };
  /**
   * The page to open: its viewable copy. Never the raw rendering, which from file:// would run its
   * scripts with nothing to stop them; a page without a copy opens nothing.
   */
  open?: string;
  discussions: DiscussionSummary[];
}

export interface DiscussionSummary {
  id: string;
  title: string | null;
  x: number | null;
  y: number | null;
  entries: { author: string | null; timestamp: number | null; text: string | null }[];
}

type Json = Record<string, unknown>;

/**
 * Bodies read ahead while summarizing. The export reads packed bodies with blocking reads
 * (Spool.readBlocking), so only those that wait on the file system's thread pool overlap: a body
 * in a file of its own, such as a large PNG whose header gives a page's size.
 */
const READ_AHEAD = 16;

/**
 * One prototype's overview, from its archived files (at most one revision: the export archives the
 * current one). Undefined when the archive holds nothing of it under a revision.
 */
export async function summarizePrototype(
  id: string,
  files: readonly StoredFile[],
  complete: boolean,
  read: BodyReader,
): Promise<PrototypeSummary | undefined> {
  let revision: number | undefined;
  const inDir = new Map<string, StoredFile>();
  const discussionIds: string[] = [];
  for (const file of files) {
    const entry = parseEntryPath(file.path);
    if (entry?.prototype !== id || entry.revision === undefined) continue;
    revision ??= entry.revision;
    if (entry.revision !== revision) continue;
    inDir.set(file.path.slice(revisionFolderOf(id, revision).length), file);
    if (entry.kind === 'discussion') discussionIds.push(entry.discussion as string);
  }
  return revision === undefined
    ? undefined
    : summarize(id, String(revision), inDir, discussionIds.sort(compareIds), complete, read);
}

async function summarize(
  id: string,
  revision: string,
  inDir: Map<string, StoredFile>,
  discussionIds: readonly string[],
  complete: boolean,
  read: BodyReader,
): Promise<PrototypeSummary> {
  const json = async (rest: string): Promise<unknown> => {
    const file = inDir.get(rest);
    if (!file) return undefined;
    try {
      return JSON.parse(jsonText(await read(file))) as unknown;
    } catch {
      return undefined;
    }
  };
  const meta = asObject(await json(revisionEntryNameOf('prototype', {})));
  const data = asObject(meta?.prototypeData);
  const versions = asObject(meta?.versions);
  const milestones = (Array.isArray(versions?.milestones) ? versions.milestones : [])
    .map(asObject)
    .filter((m): m is Json => m !== undefined && typeof m.revision === 'number')
    .map((m) => ({
      revision: m.revision as number,
      name: str(m.name) ?? '',
      created: num(Number(str(m.created) ?? m.created)),
      user: str(asObject(m.user)?.name),
    }))
    .sort((a, b) => a.revision - b.revision);

  const layers = [];
  const layerData = (layerId: string) =>
    Promise.all([
      json(revisionEntryNameOf('layer', { layer: layerId })),
      json(revisionEntryNameOf('layer-element-list', { layer: layerId })),
    ]);
  for await (const [layerId, [layer, elements]] of inOrder(
    archivedIdsOf(await json(revisionEntryNameOf('layer-list', {}))),
    READ_AHEAD,
    layerData,
  )) {
    layers.push({ id: layerId, name: str(asObject(layer)?.name), elementCount: countOf(elements) });
  }
  const layerName = new Map(layers.map((l) => [l.id, l.name ?? l.id]));

  const discussions: (DiscussionSummary & { pageId: string | null })[] = [];
  for await (const [discussionId, value] of inOrder(discussionIds, READ_AHEAD, (d) =>
    json(revisionEntryNameOf('discussion', { discussion: d })),
  )) {
    discussions.push(discussionOf(discussionId, asObject(value)));
  }

  const pages: PageSummary[] = [];
  const pageData = (pageId: string) => {
    const png = inDir.get(revisionEntryNameOf('page-png', { page: pageId }));
    return Promise.all([
      json(revisionEntryNameOf('page', { page: pageId })),
      png,
      png ? pngSize(png, read) : undefined,
      json(revisionEntryNameOf('page-element-list', { page: pageId })),
    ]);
  };
  for await (const [pageId, [pageJson, png, size, elements]] of inOrder(
    archivedIdsOf(await json(revisionEntryNameOf('page-list', {}))),
    READ_AHEAD,
    pageData,
  )) {
    const meta_ = asObject(pageJson);
    const open = inDir.get(revisionEntryNameOf('page-view', { page: pageId }));
    pages.push({
      id: pageId,
      name: str(meta_?.name),
      layerNames: (Array.isArray(meta_?.layers) ? meta_.layers : [])
        .filter((l): l is string => typeof l === 'string')
        .map((l) => layerName.get(l) ?? l),
      elementCount: countOf(elements),
      ...(png && size ? { png: { path: png.path, ...size } } : {}),
      ...(open ? { open: open.path } : {}),
      discussions: discussions.filter((d) => d.pageId === pageId),
    });
  }
  const pageIds = new Set(pages.map((p) => p.id));
  return {
    id,
    revision,
    name: str(data?.name),
    lastModification: num(data?.lastModification),
    lastUser: str(data?.lastUser),
    milestones,
    pages,
    layers,
    otherDiscussions: discussions.filter((d) => d.pageId === null || !pageIds.has(d.pageId)),
    complete,
  };
}

function discussionOf(id: string, value: Json | undefined): DiscussionSummary & { pageId: string | null } {
  return {
    id,
    pageId: str(value?.pageId),
    title: str(value?.title),
    x: num(value?.positionX),
    y: num(value?.positionY),
    entries: (Array.isArray(value?.entries) ? value.entries : []).map(asObject).map((e) => ({
      author: str(e?.author),
      timestamp: num(e?.timestamp),
      text: str(e?.text),
    })),
  };
}

function countOf(value: unknown): number | null {
  return Array.isArray(value) ? value.length : null;
}

function asObject(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** Width and height from the IHDR chunk, which a valid PNG has first. */
async function pngSize(png: BodyRef, read: BodyReader): Promise<{ width: number; height: number } | undefined> {
  if (png.size < 24) return undefined;
  const head = await read({ ...png, size: 24 });
  if (head.length < 24 || head.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  const width = head.readUInt32BE(16);
  const height = head.readUInt32BE(20);
  return width > 0 && height > 0 ? { width, height } : undefined;
}
