/**
 * A template of the table of resource kinds cut at its placeholders, once: `split` with the
 * capture group leaves the literal text at even places and the parameter names at odd ones. Every
 * path and source the crawl builds is filled from one; a regular expression replace with a
 * callback for each cost more than the rest of building it.
 */
const PIECES = new Map<string, readonly string[]>();

export function templatePieces(template: string): readonly string[] {
  let pieces = PIECES.get(template);
  if (pieces === undefined) PIECES.set(template, (pieces = template.split(/\{(\w+)\}/)));
  return pieces;
}
