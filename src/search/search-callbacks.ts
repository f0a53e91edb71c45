/**
 * The names the index's parts call back in the browser (each part is a script: a page opened from
 * file:// may not fetch() a file). A module of its own, importing nothing, so that the search box's
 * browser code can share them without the Node side of the index.
 */
export const PARTS_CALLBACK = 'rabbitSearchParts';
export const PART_CALLBACK = 'rabbitSearchPart';
