/**
 * One line of text cut into runs that each draw with one font, in the order they appear on the
 * page. Every character goes to the first face that has it; one that no face has becomes the
 * replacement and is counted. Right-to-left text is ordered by a reduced form of the Unicode
 * bidirectional algorithm (strong types, numbers and neutrals; no explicit embeddings or
 * mirroring), which is enough to read a Hebrew or Arabic label with Latin words and numbers in
 * it; the glyphs inside a right-to-left run are shaped and reversed by fontkit's layout.
 */
export interface TextRun {
  /** The face's place in the fallback list. */
  face: number;
  text: string;
}

export interface LineRuns {
  runs: TextRun[];
  /** Characters no face could draw, each drawn as the replacement. */
  replaced: number;
}

/** Which face draws a code point: its place in the fallback list, or -1 when none has it. */
export type FacePicker = (codePoint: number) => number;

/** Drawn for a character no font has: every font has a question mark. */
export const REPLACEMENT = '?';

export function lineRuns(line: string, pick: FacePicker): LineRuns {
  const chars: { char: string; face: number; type: BidiType }[] = [];
  let replaced = 0;
  for (const raw of line) {
    const char = raw === '\t' ? ' ' : raw;
    const code = char.codePointAt(0) as number;
    let face = pick(code);
    if (face < 0) {
      // Joiners and variation selectors draw nothing: a font without them loses nothing visible.
      if (IGNORABLE.test(char)) continue;
      replaced++;
      face = pick(REPLACEMENT.codePointAt(0) as number);
      chars.push({ char: REPLACEMENT, face: Math.max(face, 0), type: 'N' });
      continue;
    }
    chars.push({ char, face, type: bidiTypeOf(char) });
  }
  const levels = resolveLevels(chars.map((c) => c.type));
  // fontkit shapes a run by the script it finds first: Hebrew and Arabic side by side are two runs.
  const runs: (TextRun & { level: number; script: string })[] = [];
  for (const [index, { char, face }] of chars.entries()) {
    const level = levels[index] as number;
    const script = ARABIC.test(char) ? 'arab' : HEBREW.test(char) ? 'hebr' : '';
    const last = runs.at(-1);
    if (
      last?.face === face &&
      last.level === level &&
      (script === '' || last.script === '' || last.script === script)
    ) {
      last.text += char;
      last.script ||= script;
    } else {
      runs.push({ face, text: char, level, script });
    }
  }
  return { runs: reorder(runs).map(({ face, text }) => ({ face, text })), replaced };
}

type BidiType = 'L' | 'R' | 'EN' | 'N';

const ARABIC = /^[\u0600-\u06FF\u0750-\u077F\u08A0-\u08FF\uFB50-\uFDFF\uFE70-\uFEFF]$/u;
const HEBREW = /^[\u0590-\u05FF\uFB1D-\uFB4F]$/u;
const IGNORABLE = /^\p{Default_Ignorable_Code_Point}$/u;
const RTL = /^[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]$/u;

function bidiTypeOf(char: string): BidiType {
  if (/^\p{Nd}$/u.test(char)) return 'EN';
  if (RTL.test(char)) return /^[\p{L}\p{M}]$/u.test(char) ? 'R' : 'N';
  return /^\p{L}$/u.test(char) ? 'L' : 'N';
}

/** Embedding levels (rules W7, N1, N2, I1, I2): the line's direction is its first strong character's. */
export function resolveLevels(types: readonly BidiType[]): number[] {
  const base = types.find((t) => t === 'L' || t === 'R') === 'R' ? 1 : 0;
  const edge: 'L' | 'R' = base === 1 ? 'R' : 'L';
  let lastStrong: 'L' | 'R' = edge;
  const resolved = types.map((type): BidiType => {
    if (type === 'L' || type === 'R') lastStrong = type;
    // A number after left-to-right text is part of it (W7).
    return type === 'EN' && lastStrong === 'L' ? 'L' : type;
  });
  // Neutrals between two stretches of one direction take it, others the line's; numbers count as R.
  const direction = (type: BidiType | undefined): 'L' | 'R' => (type === undefined ? edge : type === 'L' ? 'L' : 'R');
  for (let i = 0; i < resolved.length; i++) {
    if (resolved[i] !== 'N') continue;
    let end = i;
    while (end < resolved.length && resolved[end] === 'N') end++;
    const before = direction(resolved[i - 1]);
    const side = before === direction(resolved[end]) ? before : edge;
    resolved.fill(side, i, end);
    i = end - 1;
  }
  return resolved.map((type) => (base === 0 ? (type === 'L' ? 0 : type === 'R' ? 1 : 2) : type === 'R' ? 1 : 2));
}

/** Rule L2: from the highest level down, every stretch at that level or above is reversed. */
function reorder<T extends { level: number }>(runs: T[]): T[] {
  const out = [...runs];
  const highest = Math.max(0, ...out.map((r) => r.level));
  for (let level = highest; level >= 1; level--) {
    for (let i = 0; i < out.length; i++) {
      if ((out[i] as T).level < level) continue;
      let end = i;
      while (end < out.length && (out[end] as T).level >= level) end++;
      out.splice(i, end - i, ...out.slice(i, end).reverse());
      i = end;
    }
  }
  return out;
}
