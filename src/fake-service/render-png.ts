import { boxOf, visibleElements } from './element-geometry.js';
import type { ElementRecord, PageRecord, PrototypeRecord } from './model.js';
import type { Payload } from './payload.js';
import { bufferPayload } from './payload.js';
import { createCanvas, encodeHead, fillRect, IEND, paddedSize, paddingChunks } from './png.js';
import type { Rgb } from './png.js';
import { deriveBytes, hash32 } from './prng.js';

export const PAGE_WIDTH = 320;
export const PAGE_HEIGHT = 240;

const WHITE: Rgb = [255, 255, 255];
const BORDER: Rgb = [51, 51, 51];

/**
 * The page as a raster: each visible element a filled rectangle with a border, coloured from its
 * id and type so overlapping elements stay apart. With padding, noise chunks follow the image
 * data and are generated while the body is written.
 */
export function renderPagePng(proto: PrototypeRecord, page: PageRecord, seed: number, padding: number): Payload {
  const canvas = createCanvas(PAGE_WIDTH, PAGE_HEIGHT, WHITE);
  for (const element of visibleElements(proto, page)) {
    const box = boxOf(element);
    fillRect(canvas, box.x, box.y, box.width, box.height, BORDER);
    fillRect(canvas, box.x + 1, box.y + 1, box.width - 2, box.height - 2, colorOf(element));
  }
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

function colorOf(element: ElementRecord): Rgb {
  const h = hash32(`${element.id}:${String(element.type)}`);
  // Keep colours light so borders stay visible.
  return [128 + (h & 0x7f), 128 + ((h >>> 8) & 0x7f), 128 + ((h >>> 16) & 0x7f)];
}
