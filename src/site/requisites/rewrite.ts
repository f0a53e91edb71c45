import { assertSafeRelative } from '../../api/paths.js';

export interface Replacement {
  start: number;
  end: number;
  text: string;
}

/**
 * Splices replacements into latin1 text; everything between them is copied as it was. Overlapping
 * replacements (which a correct scan never yields) keep the first and drop the rest.
 */
export function applyReplacements(text: string, replacements: readonly Replacement[]): string {
  const sorted = [...replacements].sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const r of sorted) {
    if (r.start < at) continue;
    out += text.slice(at, r.start) + r.text;
    at = r.end;
  }
  return out + text.slice(at);
}

/**
 * The relative URL from the entry `from` to the entry `to` inside the archive, e.g.
 * `prototypes/3/r6/pages/page1.view.html` to `assets/ab.png` is `../../../../assets/ab.png`.
 * Both must be safe entry names, so the result holds only characters that need no escaping in an
 * attribute, a CSS url() or a URL.
 */
export function relativeEntryUrl(from: string, to: string): string {
  assertSafeRelative(from);
  assertSafeRelative(to);
  const fromDirs = from.split('/').slice(0, -1);
  const toParts = to.split('/');
  let common = 0;
  while (common < fromDirs.length && common < toParts.length - 1 && fromDirs[common] === toParts[common]) common++;
  return [...fromDirs.slice(common).map(() => '..'), ...toParts.slice(common)].join('/');
}
