/**
 * Names the page writers give: element ids unique within one document, whatever ids the archive
 * repeats, and the file a page is written to in its prototype's folder.
 */

/** Gives each wanted id once, `-2`, `-3`... after it when already taken (by `taken` or an earlier call). */
export type UniqueId = (wanted: string) => string;

export function uniqueIds(taken: Iterable<string> = []): UniqueId {
  const used = new Set<string>(taken);
  return (wanted) => {
    let id = wanted;
    for (let n = 2; used.has(id); n++) id = `${wanted}-${n}`;
    used.add(id);
    return id;
  };
}

/** `03-page7.svg`: the page's place first, so a listing shows the pages in order, then its id. */
export function pageFileOf(number: number, pageId: string, extension: string): string {
  return `${String(number).padStart(2, '0')}-${pageId}.${extension}`;
}
