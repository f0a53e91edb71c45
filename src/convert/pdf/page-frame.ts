import type { ElementData } from '../prototype-data.js';

/**
 * Where a wireframe page's PDF page lies. The rendering keeps its place in PDF space, pixels as
 * points from (0, 0), so link rectangles and label positions read as the page's own coordinates;
 * the page box grows around it to take in every element (some lie left of, above or beyond the
 * rendering, and their labels would otherwise fall off the page where no reader finds them), plus
 * a strip at the bottom for the page's number and name.
 */
export interface PageFrame {
  /** The MediaBox in PDF space (y up): left, bottom, right, top. */
  box: [number, number, number, number];
  /** The strip for the caption, in the page's own coordinates (y down from the rendering's top). */
  caption: { x: number; y: number; width: number; height: number };
}

export const CAPTION_HEIGHT = 24;
/** No reader is obliged to show a page wider or taller than this (PDF's implementation limit). */
export const MAX_PAGE_SIDE = 14_400;

export function pageFrame(size: { width: number; height: number }, elements: readonly ElementData[]): PageFrame {
  let [left, top, right, bottom] = [0, 0, size.width, size.height];
  for (const { box } of elements) {
    if (![box.x, box.y, box.width, box.height].every(Number.isFinite)) continue;
    left = Math.min(left, box.x);
    top = Math.min(top, box.y);
    right = Math.max(right, box.x + Math.max(box.width, 0));
    bottom = Math.max(bottom, box.y + Math.max(box.height, 0));
  }
  // Growth stops at the limit, on the rendering's side first: a hostile coordinate cannot make the page unreadable.
  const side = (low: number, high: number, low0: number, high0: number): [number, number] => {
    const room = Math.max(MAX_PAGE_SIDE - (high0 - low0), 0);
    const before = Math.min(low0 - low, room / 2 + Math.max(room / 2 - (high - high0), 0));
    const after = Math.min(high - high0, room - before);
    return [Math.floor(low0 - before), Math.ceil(high0 + after)];
  };
  [left, right] = side(left, right, 0, size.width);
  [top, bottom] = side(top, bottom, 0, size.height);
  return {
    box: [left, size.height - bottom - CAPTION_HEIGHT, right, size.height - top],
    caption: { x: left, y: bottom, width: right - left, height: CAPTION_HEIGHT },
  };
}
