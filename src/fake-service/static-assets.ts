import { createCanvas, encodePng, fillRect } from './png.js';
import type { Rgb } from './png.js';
import type { Representation } from './payload.js';
import { bufferPayload, CSS_TYPE, PNG_TYPE } from './payload.js';

/**
 * The stylesheet and images the XHTML rendering points at. They sit outside /rabbit/api/ and,
 * like the live service's static files, need no api_key.
 */
export const STATIC_PATHS = {
  css: '/rabbit/static/css/page.css',
  logo: '/rabbit/static/img/logo.png',
  icon: '/rabbit/static/img/icon.png',
  background: '/rabbit/static/img/bg.png',
  button: '/rabbit/static/img/button.png',
} as const;

// Static files never change while the service runs; any fixed past date will do.
const STATIC_MODIFIED = Date.UTC(2015, 4, 1);

// One url() root-relative, one relative to the stylesheet itself, quoted differently.
const STYLESHEET = `@charset "UTF-8";
body { margin: 0; font-family: sans-serif; background: #fff url(${STATIC_PATHS.background}) repeat-x; }
.header { height: 32px; }
.page { position: relative; width: 320px; height: 240px; border: 1px solid #ccc; }
.element { position: absolute; box-sizing: border-box; border: 1px solid #333; overflow: hidden; }
.element.button { background-image: url("../img/button.png"); text-align: center; }
.element.image { background: #ddd; }
`;

export function buildStaticAssets(): Map<string, Representation> {
  const assets = new Map<string, Representation>();
  const add = (path: string, contentType: string, bytes: Buffer): void => {
    assets.set(path, { contentType, lastModified: STATIC_MODIFIED, payload: bufferPayload(bytes) });
  };
  add(STATIC_PATHS.css, CSS_TYPE, Buffer.from(STYLESHEET, 'utf8'));
  add(STATIC_PATHS.logo, PNG_TYPE, tile(48, 16, [230, 80, 40], [255, 255, 255]));
  add(STATIC_PATHS.icon, PNG_TYPE, tile(16, 16, [40, 120, 220], [250, 250, 250]));
  add(STATIC_PATHS.background, PNG_TYPE, tile(8, 32, [240, 240, 245], [225, 225, 235]));
  add(STATIC_PATHS.button, PNG_TYPE, tile(32, 12, [200, 200, 200], [170, 170, 170]));
  return assets;
}

function tile(width: number, height: number, fill: Rgb, accent: Rgb): Buffer {
  const canvas = createCanvas(width, height, fill);
  fillRect(canvas, 2, 2, width - 4, Math.max(1, Math.floor(height / 3)), accent);
  return encodePng(canvas);
}
