import { foldWithOffsets } from './fold.js';

/** What a hit shows of its text: this many characters either side of the match, and of the match itself. */
const CONTEXT = 40;
const MAX_MATCH = 80;

/** The match in its text, cut to a window around it: `before` and `after` start or end with … where cut. */
export interface HitContext {
  before: string;
  match: string;
  after: string;
}

/**
 * Finds `query` (folded) in `text` and returns the window around its first occurrence; undefined
 * when the folded text does not hold it. Offsets are found in the folded text and mapped back, so
 * a match of `uber` in `Übersicht` marks `Über`.
 */
export function hitContext(text: string, query: string): HitContext | undefined {
  const { folded, from } = foldWithOffsets(text);
  const at = folded.indexOf(query);
  if (at < 0 || query === '') return undefined;
  const start = from[at] as number;
  const last = from[at + query.length - 1] as number;
  const end = last + ((text.codePointAt(last) ?? 0) > 0xffff ? 2 : 1);
  const points = (s: string) => Array.from(s);
  const before = points(text.slice(0, start));
  const match = points(text.slice(start, end));
  const after = points(text.slice(end));
  return {
    before: (before.length > CONTEXT ? '…' : '') + before.slice(-CONTEXT).join(''),
    match: match.slice(0, MAX_MATCH).join('') + (match.length > MAX_MATCH ? '…' : ''),
    after: after.slice(0, CONTEXT).join('') + (after.length > CONTEXT ? '…' : ''),
  };
}

/**
 * A value from the archive made safe to print on a terminal or in a line of JSON: control
 * characters (C0, DEL, C1), line and paragraph separators and the bidirectional overrides that
 * reorder what a terminal shows are written as `\u{…}`, and a backslash as `\\`, so an escape
 * cannot be forged. Cut at `max` characters.
 */
export function printable(text: string, max = 200): string {
  const points = Array.from(text);
  const cut = points.length > max ? `${points.slice(0, max).join('')}…` : text;
  // eslint-disable-next-line no-control-regex
  return cut.replace(/[\\\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) =>
    c === '\\' ? '\\\\' : `\\u{${c.charCodeAt(0).toString(16)}}`,
  );
}
