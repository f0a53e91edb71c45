import type { BodyReader, BodyRef } from '../storage/spool.js';
import type { StoredFile } from '../storage/stored-file.js';
import { compareIds } from '../api/ids.js';
import { parseEntryPath, revisionEntryNameOf, revisionFolderOf } from '../api/entry-paths.js';
import { ArchivedPrototypeReader } from '../archive/archived-prototype-reader.js';
import { PNG_SIZE_BYTES, pngSize, type DiscussionRecord } from '../archive/archived-records.js';
import { spooledEntries } from './spooled-entries.js';

/**
 * What index.html shows, read back from the archived bodies themselves (not from the crawl's
 * memory) by the archive's reader of a prototype (archive/archived-prototype-reader.ts), so the
 * overview shows exactly what the archive holds: anything missing or odd shows as missing.
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

/** A prototype's files in the one revision folder it is summarized from, by their names below it. */
interface HeldRevision {
  id: string;
  revision: number;
  files: Map<string, StoredFile>;
  /** Its discussions' ids, in id order: found on the one pass over its files. */
  discussionIds: string[];
}

/**
 * One prototype's overview, from its archived files (at most one revision: the export archives the
 * current one). Undefined when the archive holds nothing of it under a revision. Each page costs
 * the reads of its JSON, its element list and its rendering's first bytes, a window of pages at a
 * time.
 */
export async function summarizePrototype(
  id: string,
  files: readonly StoredFile[],
  complete: boolean,
  read: BodyReader,
): Promise<PrototypeSummary | undefined> {
  const held = heldRevision(id, files);
  if (held === undefined) return undefined;
  const bodies = { get: (rest: string) => held.files.get(rest), names: () => held.files.keys() };
  const reader = new ArchivedPrototypeReader(spooledEntries(held, bodies, read));
  const meta = await reader.meta();
  const layers = await layerSummaries(reader);
  const discussions = await discussionsByPage(reader, held.discussionIds);
  const layerNames = new Map(layers.map((l) => [l.id, l.name ?? l.id]));
  const pages = await pageSummaries(reader, held, read, layerNames, discussions);
  return {
    id,
    revision: String(held.revision),
    name: meta.name,
    lastModification: meta.lastModification,
    lastUser: meta.lastUser,
    milestones: meta.milestones,
    pages,
    layers,
    // What is left once the pages took theirs: discussions of no page, or of one not archived.
    otherDiscussions: [...discussions.values()].flat().sort((a, b) => compareIds(a.id, b.id)),
    complete,
  };
}

function heldRevision(id: string, files: readonly StoredFile[]): HeldRevision | undefined {
  let revision: number | undefined;
  const held = new Map<string, StoredFile>();
  const discussionIds: string[] = [];
  for (const file of files) {
    const entry = parseEntryPath(file.path);
    if (entry?.prototype !== id || entry.revision === undefined) continue;
    revision ??= entry.revision;
    if (entry.revision !== revision) continue;
    held.set(file.path.slice(revisionFolderOf(id, revision).length), file);
    if (entry.kind === 'discussion') discussionIds.push(entry.discussion as string);
  }
  return revision === undefined
    ? undefined
    : { id, revision, files: held, discussionIds: discussionIds.sort(compareIds) };
}

async function layerSummaries(reader: ArchivedPrototypeReader): Promise<PrototypeSummary['layers']> {
  const layers: PrototypeSummary['layers'] = [];
  const layerData = (layerId: string) => Promise.all([reader.layer(layerId), reader.elementIds('layer', layerId)]);
  for await (const [layerId, [layer, elements]] of reader.ahead((await reader.listed('layer')) ?? [], layerData))
    layers.push({ id: layerId, name: layer.name, elementCount: elements?.length ?? null });
  return layers;
}

/** The discussions by the page they are on (`null` for none), each list in id order. */
async function discussionsByPage(
  reader: ArchivedPrototypeReader,
  ids: readonly string[],
): Promise<Map<string | null, DiscussionSummary[]>> {
  const byPage = new Map<string | null, DiscussionSummary[]>();
  for await (const discussion of reader.discussions(ids)) {
    const list = byPage.get(discussion.pageId) ?? [];
    list.push(discussionSummary(discussion));
    byPage.set(discussion.pageId, list);
  }
  return byPage;
}

/** The pages in their order; each takes its discussions out of `discussions`. */
async function pageSummaries(
  reader: ArchivedPrototypeReader,
  held: HeldRevision,
  read: BodyReader,
  layerNames: ReadonlyMap<string, string>,
  discussions: Map<string | null, DiscussionSummary[]>,
): Promise<PageSummary[]> {
  const pages: PageSummary[] = [];
  const pageData = (pageId: string) => {
    const png = held.files.get(revisionEntryNameOf('page-png', { page: pageId }));
    return Promise.all([reader.page(pageId), png, png && renderingSize(png, read), reader.elementIds('page', pageId)]);
  };
  for await (const [pageId, [page, png, size, elements]] of reader.ahead((await reader.pageOrder()).ids, pageData)) {
    const open = held.files.get(revisionEntryNameOf('page-view', { page: pageId }));
    pages.push({
      id: pageId,
      name: page.name,
      layerNames: page.layerIds.map((l) => layerNames.get(l) ?? l),
      elementCount: elements?.length ?? null,
      ...(png && size ? { png: { path: png.path, ...size } } : {}),
      ...(open ? { open: open.path } : {}),
      discussions: discussions.get(pageId) ?? [],
    });
    discussions.delete(pageId);
  }
  return pages;
}

function discussionSummary({ id, title, x, y, entries }: DiscussionRecord): DiscussionSummary {
  return { id, title, x, y, entries };
}

/** A page's rendering's size, from its first bytes alone: the overview needs no more of it. */
async function renderingSize(png: BodyRef, read: BodyReader): Promise<{ width: number; height: number } | undefined> {
  if (png.size < PNG_SIZE_BYTES) return undefined;
  return pngSize(await read({ ...png, size: PNG_SIZE_BYTES }));
}
