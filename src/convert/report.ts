import type { PackageReport } from './formats/archive-format.js';
import type { Skipped } from './prototype-data.js';

/** `DIR/convert-report.json`: what each prototype became, and what did not carry over. */
export const REPORT_FILE = 'convert-report.json';

export interface PrototypeReport {
  id: string;
  name: string | null;
  revision: number;
  /**
   * The document written (a .drawio or .pdf file, or a folder of .svg or .excalidraw pages),
   * relative to the output folder; null when none could be.
   */
  file: string | null;
  pages: number;
  shapes: number;
  layers: number;
  discussions: number;
  links: number;
  /** Element types with no draw.io shape in the table, drawn as labelled rectangles, with counts. */
  genericTypes: Record<string, number>;
  /** Characters XML 1.0 cannot hold, dropped from names and texts. */
  droppedCharacters: number;
  /**
   * PDF only: characters no font on this machine has, drawn as `?` (the exact text stays
   * searchable); 0 for the other formats, which leave drawing to their reader.
   */
  replacedCharacters: number;
  /** PDF only: the characters replaced, one by one (their counts add up to `replacedCharacters`). */
  missingCharacters?: MissingCharacter[];
  /** PDF only: the binder's size, against the PNGs it embeds, and the font faces it embeds subsets of. */
  binder?: { bytes: number; renderingBytes: number; fonts: string[] };
  /** Parts that could not be converted, with why: any makes the prototype incomplete. */
  skipped: Skipped[];
  /** Converted, with a caveat: targets that name no page, defaults for missing geometry. */
  notes: Skipped[];
  /** True when everything the archive holds for it was converted (and the archive held all of it). */
  complete: boolean;
}

/** A character a PDF binder drew as `?` for want of a font. */
export interface MissingCharacter {
  /** `U+1F6D2`, as Unicode's charts name it. */
  codePoint: string;
  character: string;
  /** How many texts (names, labels) it was replaced in. */
  count: number;
  /**
   * A font that has it, with the Debian package that installs it, when one is known: one not
   * installed here if there is one, else an installed one fontconfig did not offer.
   */
  font?: { name: string; debian: string; installed: boolean };
}

export interface ConvertReport {
  tool: { name: string; version: string };
  archive: string;
  /** The format's name (formats/registry.ts). */
  to: string;
  /** Whether the pages' renderings were drawn: not with --no-rendering, nor from an archive that holds none. */
  rendering: boolean;
  complete: boolean;
  /** What holds for the archive as a whole (an export without renderings), said once. */
  notes: string[];
  /** Empty for a format that packages the whole archive (see `package`). */
  prototypes: PrototypeReport[];
  /** The package written, for a format of the whole archive (wacz, bagit). */
  package?: Omit<PackageReport, 'notes'>;
}

export function emptyPrototypeReport(id: string, name: string | null, revision: number): PrototypeReport {
  return {
    id,
    name,
    revision,
    file: null,
    pages: 0,
    shapes: 0,
    layers: 0,
    discussions: 0,
    links: 0,
    genericTypes: {},
    droppedCharacters: 0,
    replacedCharacters: 0,
    skipped: [],
    notes: [],
    complete: false,
  };
}

export function addCounts(into: Record<string, number>, from: Readonly<Record<string, number>>): void {
  for (const [key, count] of Object.entries(from)) addCount(into, key, count);
}

/**
 * Adds `count` to the tally of `name`, a name from the archive (an element's type): read from the
 * tally's own names only, and defined rather than assigned, since a plain object answers
 * `constructor` or `toString` with a function and takes an assignment to `__proto__` as a new
 * prototype.
 */
export function addCount(into: Record<string, number>, name: string, count: number): void {
  const before = Object.hasOwn(into, name) ? (into[name] as number) : 0;
  Object.defineProperty(into, name, { value: before + count, enumerable: true, writable: true, configurable: true });
}
