/**
 * One line of text cut into runs that each draw with one font, in the order they appear on the
 * page. Every character goes to the first face that has it; one that no face has becomes the
 * replacement, a run of its own that keeps the character it stands for. Right-to-left text is
 * ordered by a reduced form of the Unicode bidirectional algorithm (strong types, numbers and
 * neutrals; no explicit embeddings or mirroring), which is enough to read a Hebrew or Arabic label
 * with Latin words and numbers in it; the glyphs inside a right-to-left run are shaped and
 * reversed by fontkit's layout.
 */
export interface TextRun {
  /** The face's place in the fallback list. */
  face: number;
  text: string;
  /** Odd for right-to-left text (its glyphs are laid out right to left), even for left-to-right. */
  level: number;
  /** For a replacement: the character no face has, which the run stands for. */
  actual?: string;
}

export interface LineRuns {
  runs: TextRun[];
  /** Characters no face could draw, each drawn as the replacement, in the order of the line. */
  missing: string[];
  /** Whether the line holds right-to-left text (some run is at an odd level). */
  rightToLeft: boolean;
}

/** Which face draws a code point: its place in the fallback list, or -1 when none has it. */
export type FacePicker = (codePoint: number) => number;

/** Drawn for a character no font has: every font has a question mark. */
export const REPLACEMENT = '?';

export function lineRuns(line: string, pick: FacePicker): LineRuns {
  const chars: { char: string; face: number; type: BidiType; actual?: string }[] = [];
  const missing: string[] = [];
  for (const raw of line) {
    const char = raw === '\t' ? ' ' : raw;
    const code = char.codePointAt(0) as number;
    const face = pick(code);
    if (face < 0) {
      // Joiners and variation selectors draw nothing: a font without them loses nothing visible.
      if (IGNORABLE.test(char)) continue;
      missing.push(char);
      const replacement = Math.max(pick(REPLACEMENT.codePointAt(0) as number), 0);
      chars.push({ char: REPLACEMENT, face: replacement, type: 'N', actual: char });
      continue;
    }
    chars.push({ char, face, type: bidiTypeOf(char) });
  }
  const levels = resolveLevels(chars.map((c) => c.type));
  // fontkit shapes a run by the script it finds first: Hebrew and Arabic side by side are two runs.
  const runs: (TextRun & { script: string })[] = [];
  for (const [index, { char, face, actual }] of chars.entries()) {
    const level = levels[index] as number;
    const script = ARABIC.test(char) ? 'arab' : HEBREW.test(char) ? 'hebr' : '';
    const last = runs.at(-1);
    if (
      actual === undefined &&
      last !== undefined &&
      last.actual === undefined &&
      last.face === face &&
      last.level === level &&
      (script === '' || last.script === '' || last.script === script)
    ) {
      last.text += char;
      last.script ||= script;
    } else {
      runs.push({ face, text: char, level, script, ...(actual !== undefined ? { actual } : {}) });
    }
  }
  return {
    runs: reorder(runs).map(({ script: _, ...run }) => run),
    missing,
    rightToLeft: runs.some((run) => run.level % 2 === 1),
  };
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
