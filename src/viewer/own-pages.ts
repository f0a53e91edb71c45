import type { Readable } from 'node:stream';
import { parseGeneratedEntry } from '../api/generated-entries.js';
import type { ArchiveCatalog, ArchivedPrototype } from '../archive/archive-catalog.js';
import type { Archive } from '../archive/open-archive.js';
import { inOrder } from '../core/in-order.js';
import type { ManifestError } from '../manifest/types.js';
import { indexEntryOfHeld, summarizeHeld, type HeldPrototype } from '../site/archive-data.js';
import {
  INDEX_ERROR_LIMIT,
  prototypeIndexPath,
  renderIndex,
  renderPrototypePage,
  type IndexEntry,
} from '../site/index-html.js';

/**
 * The viewer's own pages under `view`: index.html and the overview pages, the only pages that run
 * a script (the search box). A page let run a script may also navigate on its own (a
 * `<meta http-equiv="refresh">` acts in any document that may run scripts, and no policy governs
 * it), so these are never the archive's bytes, which anyone may have written: they are rendered
 * here from the archive's data (its manifest and the prototypes' JSON, each checked against the
 * manifest as it is read) by the renderers the export writes them with, as the box's script is
 * the tool's own copy. For an archive as the export wrote it, they are the same bytes. The
 * archive's entries under these names are never served; every other entry is, with no script.
 */
export interface OwnPages {
  /** The page under `name`, or undefined when the export would write none there (an unknown prototype). */
  render(name: string): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Whether `name` is one of the viewer's own pages, by the table of generated entries. */
export function isOwnPage(name: string): boolean {
  const generated = parseGeneratedEntry(name)?.name;
  return generated === 'index' || generated === 'overview';
}

/** Prototypes read at once for index.html: each is a few small entries. */
const PROTOTYPES_AHEAD = 8;

/**
 * The pages of `archive`, which stays the caller's to close. The catalog of its entries (one
 * streaming of the manifest, filed on disk) is made at the first page asked for; index.html,
 * which reads every prototype's JSON and its first rendering's size, is rendered once and kept.
 */
export function ownPages(archive: Archive): OwnPages {
  let opened: Promise<{ catalog: ArchiveCatalog; errors: ManifestError[]; errorCount: () => number }> | undefined;
  let index: Promise<string> | undefined;
  let closed = false;
  const open = () => {
    if (closed) throw new Error('internal: the viewer pages were read after they were closed');
    if (opened !== undefined) return opened;
    opened = (async () => {
      const errors: ManifestError[] = [];
      let count = 0;
      const catalog = await archive.catalog({
        visitor: {
          error(error) {
            count += 1;
            if (errors.length < INDEX_ERROR_LIMIT) errors.push(error);
          },
        },
      });
      return { catalog, errors, errorCount: () => count };
    })();
    // A failed opening is tried again at the next page rather than kept.
    opened.catch(() => (opened = undefined));
    return opened;
  };
  const renderTop = async (): Promise<string> => {
    const { catalog, errors, errorCount } = await open();
    const prototypes: IndexEntry[] = [];
    const summarized = (p: ArchivedPrototype) => indexEntryOfHeld(heldOf(archive, p), p.complete);
    for await (const [, entry] of inOrder(overviewed(catalog), PROTOTYPES_AHEAD, summarized)) prototypes.push(entry);
    return renderIndex({
      baseUrl: catalog.head.source.baseUrl,
      prototypes,
      errors,
      errorCount: errorCount(),
      search: true,
    });
  };
  return {
    async render(name) {
      const generated = parseGeneratedEntry(name);
      if (generated?.name === 'index') {
        if (index === undefined) {
          index = renderTop();
          index.catch(() => (index = undefined));
        }
        return index;
      }
      if (generated?.name !== 'overview' || generated.prototype === undefined) return undefined;
      const { catalog } = await open();
      const prototype = catalog.prototype(generated.prototype);
      if (prototype === undefined || !hasOverview(prototype)) return undefined;
      const summary = await summarizeHeld(heldOf(archive, prototype), prototype.complete);
      return renderPrototypePage(summary, catalog.head.source.baseUrl, true);
    },
    async close() {
      closed = true;
      await (await opened?.catch(() => undefined))?.catalog.close();
    },
  };
}

/** The prototypes the export writes an overview page of, in archive order. */
function overviewed(catalog: ArchiveCatalog): ArchivedPrototype[] {
  return catalog.prototypeIds().flatMap((id) => {
    const prototype = catalog.prototype(id);
    return prototype !== undefined && hasOverview(prototype) ? [prototype] : [];
  });
}

/**
 * The export writes one for each prototype it holds entries of under a revision; its page is named
 * by the prototype's id, which must name it back (a manifest may carry any key: one that is no id
 * has no page, and no link to one).
 */
function hasOverview(prototype: ArchivedPrototype): boolean {
  if (prototype.entries === 0) return false;
  try {
    return parseGeneratedEntry(prototypeIndexPath(prototype.id))?.prototype === prototype.id;
  } catch {
    return false;
  }
}

/** A prototype's recorded revision in the archive, as the overview reads one. */
function heldOf(archive: Archive, prototype: ArchivedPrototype): HeldPrototype {
  return {
    entries: prototype,
    held: async (rest) => (await prototype.entry(rest))?.path,
    async head(rest, bytes) {
      const entry = await prototype.entry(rest);
      return entry === undefined ? undefined : firstBytes(await archive.zip.openEntry(entry.path), bytes);
    },
  };
}

/**
 * The first `bytes` of a stream, or undefined when it ends first or fails. A page rendering's size
 * is read from its first bytes, as the export reads it, not from the whole image checked against
 * the manifest: reading every rendering whole would cost the archive's size. Those bytes become two
 * numbers in the page and nothing else; the image itself is checked when the browser asks for it.
 */
async function firstBytes(stream: Readable, bytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let held = 0;
  try {
    for await (const chunk of stream) {
      chunks.push(chunk as Buffer);
      held += (chunk as Buffer).length;
      if (held >= bytes) return Buffer.concat(chunks).subarray(0, bytes);
    }
  } catch {
    return undefined;
  } finally {
    stream.destroy();
  }
  return undefined;
}
