import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * The machine's fonts a binder draws with where the bundled one (bundled-fonts.ts) has no glyph,
 * found through fontconfig: `fc-match -s` lists, in the order fontconfig itself would fall back,
 * the faces that together cover the most characters, each with its character set. So the choice
 * follows the machine (its fonts.conf, its installed packages) rather than a list of family names
 * that holds on one distribution only. Colour fonts are left out: a PDF font program draws
 * outlines, and a colour emoji font has none.
 */
export interface FontFace {
  /** Where the face comes from, as the report names it: its file, or the bundled font's name. */
  file: string;
  /** The face's place in a collection (.ttc); 0 for a single font file. */
  index: number;
  /** PostScript name, which picks the face out of a collection. */
  postscriptName: string;
  /** Code point ranges the face has glyphs for, sorted, inclusive. */
  ranges: readonly (readonly [number, number])[];
  /** The font file's bytes, read when the face is first drawn with. */
  read(): Uint8Array;
}

/** Regular faces for labels and text, bold ones for the title page's headings, in the order tried. */
export interface FontFaces {
  regular: readonly FontFace[];
  bold: readonly FontFace[];
}

export const NO_FONTS: FontFaces = { regular: [], bold: [] };

const FORMAT = '%{file}\\t%{index}\\t%{postscriptname}\\t%{color}\\t%{fontformat}\\t%{charset}\\n';
/** Formats a PDF can embed as a font program (TrueType glyf or CFF outlines). */
const EMBEDDABLE = new Set(['TrueType', 'CFF']);

let cached: Promise<FontFaces> | undefined;

/** Asked once per process: the answer does not change while convert runs. */
export function systemFonts(): Promise<FontFaces> {
  cached ??= Promise.all([fallbackList('sans-serif'), fallbackList('sans-serif:weight=bold')]).then(
    ([regular, bold]) => ({ regular, bold }),
  );
  return cached;
}

/** Forgets the answer, for a caller that has changed the environment fontconfig reads. */
export function forgetSystemFonts(): void {
  cached = undefined;
}

/** fc-match from PATH, else where distributions and Homebrew put it (a PATH may leave it out). */
const FC_MATCH = ['fc-match', '/usr/bin/fc-match', '/usr/local/bin/fc-match', '/opt/homebrew/bin/fc-match'];

async function fallbackList(pattern: string): Promise<FontFace[]> {
  for (const command of FC_MATCH) {
    const output = await new Promise<string | undefined>((resolve) => {
      execFile(command, ['-s', pattern, '--format', FORMAT], { maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => {
        resolve(error ? undefined : stdout);
      });
    });
    if (output !== undefined) return parseFcMatch(output);
  }
  // No fontconfig on this machine: the binder draws with the bundled font alone.
  return [];
}

/** One face per line, as FORMAT writes it. */
export function parseFcMatch(output: string): FontFace[] {
  const faces: FontFace[] = [];
  const seen = new Set<string>();
  for (const line of output.split('\n')) {
    const [file, index, postscriptName, color, format, charset] = line.split('\t');
    if (file === undefined || charset === undefined || postscriptName === undefined) continue;
    if (color === 'True' || !EMBEDDABLE.has(format ?? '')) continue;
    const key = `${file}\t${index}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const read = (): Uint8Array => readFileSync(file);
    faces.push({ file, index: Number(index) || 0, postscriptName, ranges: parseCharset(charset), read });
  }
  return faces;
}

/** fontconfig's charset: space-separated hex code points and ranges, `20-7e a0 ...`. */
export function parseCharset(charset: string): [number, number][] {
  const ranges: [number, number][] = [];
  for (const token of charset.trim().split(/\s+/)) {
    const match = /^([0-9a-f]+)(?:-([0-9a-f]+))?$/i.exec(token);
    if (match === null) continue;
    const first = parseInt(match[1] as string, 16);
    ranges.push([first, match[2] === undefined ? first : parseInt(match[2], 16)]);
  }
  return ranges.sort((a, b) => a[0] - b[0]);
}

/** Whether sorted inclusive ranges hold the code point. */
export function covers(ranges: readonly (readonly [number, number])[], codePoint: number): boolean {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const [first, last] = ranges[middle] as readonly [number, number];
    if (codePoint < first) high = middle - 1;
    else if (codePoint > last) low = middle + 1;
    else return true;
  }
  return false;
}
