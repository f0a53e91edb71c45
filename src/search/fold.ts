/**
 * Text as search compares it: compatibility-decomposed (NFKD: `ﬁ` is `fi`, half-width kana are
 * full-width), combining marks dropped (`é` is `e`, `Ü` is `U`), and case folded (`ß` is `ss`,
 * `ς` is `σ`). Matching is by substring of the folded text, so a word in a script written without
 * spaces (日本語) is found inside a longer run.
 *
 * The offline viewer's search script (site/browser/search-box.ts) is bundled with `foldText` and
 * `foldWithOffsets`, so the browser folds a query exactly as the command does: they use nothing a
 * browser lacks.
 */
export function foldText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .toLowerCase()
    .replace(/\p{M}/gu, '')
    .replace(/ς/g, 'σ');
}

/**
 * The folded text with, for each of its UTF-16 units, the index in `text` of the code point it
 * came from: how a match found in the folded text is marked in the original. Folded a code point
 * at a time, which gives the same text as `foldText` for everything but the final-sigma rule
 * (folded to σ by both).
 */
export function foldWithOffsets(text: string): { folded: string; from: number[] } {
  let folded = '';
  const from: number[] = [];
  let index = 0;
  for (const point of text) {
    const part = point
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toUpperCase()
      .toLowerCase()
      .replace(/\p{M}/gu, '')
      .replace(/ς/g, 'σ');
    folded += part;
    for (let unit = 0; unit < part.length; unit++) from.push(index);
    index += point.length;
  }
  return { folded, from };
}
