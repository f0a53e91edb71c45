import { parseGeneratedEntry } from '../api/generated-entries.js';
import { inOrder } from '../core/in-order.js';
import type { ManifestError } from '../manifest/types.js';
import { indexEntryOfHeld, summarizeHeld } from '../site/archive-data.js';
import type { ViewedPrototype, ViewedPrototypes } from './viewed-prototypes.js';
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
}

/** Whether `name` is one of the viewer's own pages, by the table of generated entries. */
export function isOwnPage(name: string): boolean {
  const generated = parseGeneratedEntry(name)?.name;
  return generated === 'index' || generated === 'overview';
}

/** Prototypes read at once for index.html: each is a few small entries. */
const PROTOTYPES_AHEAD = 8;

/** What index.html lists of the manifest's errors: the first ones and how many, heard as the manifest streams by. */
export class HeardErrors {
  readonly first: ManifestError[] = [];
  count = 0;
  readonly hear = (error: ManifestError): void => {
    this.count += 1;
    if (this.first.length < INDEX_ERROR_LIMIT) this.first.push(error);
  };
}

/**
 * The pages of an archive whose manifest names `baseUrl`, from its prototypes and the errors its
 * manifest holds, both heard as it streamed by. index.html, which reads every prototype's JSON and
 * its first rendering's size, is rendered once and kept; an overview page is rendered each time.
 */
export function ownPages(baseUrl: string, prototypes: ViewedPrototypes, errors: HeardErrors): OwnPages {
  let index: Promise<string> | undefined;
  const renderTop = async (): Promise<string> => {
    const listed: IndexEntry[] = [];
    const summarized = (p: ViewedPrototype) => indexEntryOfHeld(p.held(), p.complete);
    for await (const [, entry] of inOrder(overviewed(prototypes), PROTOTYPES_AHEAD, summarized)) listed.push(entry);
    return renderIndex({ baseUrl, prototypes: listed, errors: errors.first, errorCount: errors.count, search: true });
  };
  return {
    async render(name) {
      const generated = parseGeneratedEntry(name);
      if (generated?.name === 'index') {
        if (index === undefined) {
          index = renderTop();
          // One that failed is tried again at the next asking rather than kept.
          index.catch(() => (index = undefined));
        }
        return index;
      }
      if (generated?.name !== 'overview' || generated.prototype === undefined) return undefined;
      const prototype = prototypes.get(generated.prototype);
      if (prototype === undefined || !hasOverview(prototype)) return undefined;
      const summary = await summarizeHeld(prototype.held(), prototype.complete);
      return renderPrototypePage(summary, baseUrl, true);
    },
  };
}

/** The prototypes the export writes an overview page of, in archive order. */
function overviewed(prototypes: ViewedPrototypes): ViewedPrototype[] {
  return prototypes.prototypeIds().flatMap((id) => {
    const prototype = prototypes.get(id);
    return prototype !== undefined && hasOverview(prototype) ? [prototype] : [];
  });
}

/**
 * The export writes one for each prototype it holds entries of under a revision; its page is named
 * by the prototype's id, which must name it back (a manifest may carry any key: one that is no id
 * has no page, and no link to one).
 */
function hasOverview(prototype: ViewedPrototype): boolean {
  if (prototype.entries === 0) return false;
  try {
    return parseGeneratedEntry(prototypeIndexPath(prototype.id))?.prototype === prototype.id;
  } catch {
    return false;
  }
}
