import type { BodyReader } from '../storage/spool.js';
import type { StoredFile } from '../storage/stored-file.js';
import { compareIds } from '../api/ids.js';
import { parseEntryPath, revisionEntryNameOf, revisionFolderOf } from '../api/entry-paths.js';
import { ArchivedPrototypeReader, type PrototypeEntries } from '../archive/archived-prototype-reader.js';
import { PNG_SIZE_BYTES, pngSize, type DiscussionRecord } from '../archive/archived-records.js';
import { spooledEntries } from './spooled-entries.js';
import type { IndexEntry } from './index-html.js';

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
 * One revision of a prototype as its overview reads it, wherever it is held: the export's spooled
 * bodies (`summarizePrototype`), or an archive's entries, read back by `view`, which serves the
 * overview it renders from them rather than the archive's own copy of the page.
 */
export interface HeldPrototype {
  entries: PrototypeEntries;
  /** The entry's full name in the archive when the revision holds it (`rest` is its name below the revision's folder). */
  held(rest: string): Promise<string | undefined>;
  /** The first `bytes` of an entry the revision holds (a page rendering's size is in its first bytes). */
  head(rest: string, bytes: number): Promise<Buffer | undefined>;
  /** Its discussions' ids in id order, when the caller has them already. */
  discussionIds?: string[];
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
  return summarizeHeld(
    {
      entries: spooledEntries(held, bodies, read),
      held: (rest) => Promise.resolve(held.files.get(rest)?.path),
      async head(rest, bytes) {
        const file = held.files.get(rest);
        return file === undefined || file.size < bytes ? undefined : read({ ...file, size: bytes });
      },
      discussionIds: held.discussionIds,
    },
    complete,
  );
}

/** A held revision's overview (see summarizePrototype). */
export async function summarizeHeld(source: HeldPrototype, complete: boolean): Promise<PrototypeSummary> {
  const { entries } = source;
  const reader = new ArchivedPrototypeReader(entries);
  const meta = await reader.meta();
  const layers = await layerSummaries(reader);
  const discussions = await discussionsByPage(reader, source.discussionIds ?? (await reader.discussionIds()));
  const layerNames = new Map(layers.map((l) => [l.id, l.name ?? l.id]));
  const pages = await pageSummaries(reader, source, layerNames, discussions);
  return {
    id: entries.id,
    revision: String(entries.revision),
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

/** What index.html shows of a prototype, from its summary. */
export function indexEntryOf(summary: PrototypeSummary): IndexEntry {
  const first = summary.pages.find((p) => p.png);
  return {
    id: summary.id,
    name: summary.name,
    revision: summary.revision,
    complete: summary.complete,
    pages: summary.pages.length,
    ...(first?.png ? { thumbnail: first.png } : {}),
  };
}

/**
 * The same as `indexEntryOf(await summarizeHeld(source, complete))`, from the few entries it
 * needs: the prototype's JSON, its list of pages and the first bytes of renderings up to the
 * first page that has one. What `view` reads for each prototype to render index.html.
 */
export async function indexEntryOfHeld(source: HeldPrototype, complete: boolean): Promise<IndexEntry> {
  const { entries } = source;
  const reader = new ArchivedPrototypeReader(entries);
  const meta = await reader.meta();
  const { ids } = await reader.pageOrder();
  let thumbnail: IndexEntry['thumbnail'];
  for (const pageId of ids) {
    thumbnail = await renderingOf(source, pageId);
    if (thumbnail !== undefined) break;
  }
  return {
    id: entries.id,
    name: meta.name,
    revision: String(entries.revision),
    complete,
    pages: ids.length,
    ...(thumbnail ? { thumbnail } : {}),
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
  const layerData = (layerId: string) => Promise.all([reader.layer(layerId), reader.elementCount('layer', layerId)]);
  for await (const [layerId, [layer, elements]] of reader.ahead((await reader.listed('layer')) ?? [], layerData))
    layers.push({ id: layerId, name: layer.name, elementCount: elements ?? null });
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
  source: HeldPrototype,
  layerNames: ReadonlyMap<string, string>,
  discussions: Map<string | null, DiscussionSummary[]>,
): Promise<PageSummary[]> {
  const pages: PageSummary[] = [];
  const pageData = (pageId: string) =>
    Promise.all([
      reader.page(pageId),
      renderingOf(source, pageId),
      source.held(revisionEntryNameOf('page-view', { page: pageId })),
      reader.elementCount('page', pageId),
    ]);
  for await (const [pageId, [page, png, open, elements]] of reader.ahead((await reader.pageOrder()).ids, pageData)) {
    pages.push({
      id: pageId,
      name: page.name,
      layerNames: page.layerIds.map((l) => layerNames.get(l) ?? l),
      elementCount: elements ?? null,
      ...(png ? { png } : {}),
      ...(open ? { open } : {}),
      discussions: discussions.get(pageId) ?? [],
    });
    discussions.delete(pageId);
  }
  return pages;
}

function discussionSummary({ id, title, x, y, entries }: DiscussionRecord): DiscussionSummary {
  return { id, title, x, y, entries };
}

/** A page's rendering and its size, from its first bytes alone: the overview needs no more of it. */
async function renderingOf(source: HeldPrototype, pageId: string): Promise<PageSummary['png']> {
  const rest = revisionEntryNameOf('page-png', { page: pageId });
  const path = await source.held(rest);
  if (path === undefined) return undefined;
  const head = await source.head(rest, PNG_SIZE_BYTES);
  const size = head && pngSize(head);
  return size && { path, ...size };
}
