import { boxOf, visibleElements } from './element-geometry.js';
import type { DatasetOptions, ElementRecord, PageRecord, PrototypeHead } from './model.js';
import type { Payload } from './payload.js';
import { bufferPayload } from './payload.js';
import { createCanvas, encodeHead, fillRect, IEND, paddedSize, paddingChunks } from './png.js';
import type { Canvas, Rgb } from './png.js';
import { deriveBytes, hash32 } from './prng.js';

export const PAGE_WIDTH = 320;
export const PAGE_HEIGHT = 240;

const WHITE: Rgb = [255, 255, 255];
const BORDER: Rgb = [51, 51, 51];

export type PngSize = Pick<DatasetOptions, 'pngWidth' | 'pngHeight' | 'pngPaddingBytes'>;

/**
 * The page as a raster: each visible element a filled rectangle with a border, coloured from its
 * id and type so overlapping elements stay apart. A size other than the page's own scales the
 * boxes (small images keep a million-page benchmark cheap). With padding, noise chunks follow
 * the image data and are generated while the body is written.
 */
export function renderPagePng(proto: PrototypeHead, page: PageRecord, seed: number, size: PngSize): Payload {
  const canvas = blankCanvas(size.pngWidth, size.pngHeight);
  const sx = size.pngWidth / PAGE_WIDTH;
  const sy = size.pngHeight / PAGE_HEIGHT;
  for (const element of visibleElements(proto, page)) {
    const box = boxOf(element);
    const [x, y, width, height] = [box.x * sx, box.y * sy, box.width * sx, box.height * sy];
    fillRect(canvas, x, y, width, height, BORDER);
    fillRect(canvas, x + 1, y + 1, width - 2, height - 2, colorOf(element));
  }
  const padding = size.pngPaddingBytes;
  const head = encodeHead(canvas);
  if (padding <= 0) return bufferPayload(Buffer.concat([head, IEND]));
  const key = deriveBytes(seed, `${proto.id}/${page.id}`);
  return {
    size: head.length + paddedSize(padding) + IEND.length,
    *chunks() {
      yield head;
      yield* paddingChunks(padding, key);
      yield IEND;
    },
  };
}

// White canvases by size: copying one is cheaper than filling it pixel by pixel for every page.
const blanks = new Map<string, Canvas>();

function blankCanvas(width: number, height: number): Canvas {
  const key = `${width}x${height}`;
  let blank = blanks.get(key);
  if (blank === undefined) blanks.set(key, (blank = createCanvas(width, height, WHITE)));
  return { width, height, pixels: Buffer.from(blank.pixels) };
}

function colorOf(element: ElementRecord): Rgb {
  const h = hash32(`${element.id}:${String(element.type)}`);
  // Keep colours light so borders stay visible.
  return [128 + (h & 0x7f), 128 + ((h >>> 8) & 0x7f), 128 + ((h >>> 16) & 0x7f)];
}
