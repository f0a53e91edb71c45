import { generatedEntryOf } from '../../api/generated-entries.js';

/**
 * Policies for page requisites, with their defaults in one block. The file extension of an asset
 * comes from its Content-Type through this whitelist, never from its URL: a URL is the service's
 * (or an attacker's) text, and an extension decides how a browser treats the file.
 */
export interface AssetLimits {
  /** Largest body accepted for one asset. */
  maxBytes: number;
  /** Largest stylesheet that is scanned for references of its own. */
  maxCssBytes: number;
  /** Most distinct assets fetched in one export. */
  maxAssets: number;
  /** How deep stylesheets importing stylesheets are followed (a page's own sheet is depth 1). */
  maxCssDepth: number;
}

export const ASSET_LIMITS: AssetLimits = {
  maxBytes: 16 * 1024 * 1024,
  maxCssBytes: 2 * 1024 * 1024,
  maxAssets: 2000,
  maxCssDepth: 4,
};

const EXTENSIONS: Record<string, string> = {
  'text/css': 'css',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/pjpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/bmp': 'bmp',
  'image/svg+xml': 'svg',
  'image/x-icon': 'ico',
  'image/vnd.microsoft.icon': 'ico',
  'font/woff': 'woff',
  'font/woff2': 'woff2',
  'font/ttf': 'ttf',
  'font/otf': 'otf',
  'application/font-woff': 'woff',
  'application/font-woff2': 'woff2',
  'application/x-font-ttf': 'ttf',
  'application/vnd.ms-fontobject': 'eot',
};

/** The media type without parameters, lower case: `Text/CSS; charset=utf-8` is `text/css`. */
export function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/** `bin` for anything not on the list: kept, but no browser will take it for a page or script. */
export function extensionFor(contentType: string): string {
  // Only the table's own names: a plain object also answers `constructor` and `__proto__`.
  const type = mediaType(contentType);
  return Object.hasOwn(EXTENSIONS, type) ? (EXTENSIONS[type] as string) : 'bin';
}

export function isCss(contentType: string): boolean {
  return mediaType(contentType) === 'text/css';
}

/** The content-addressed entry name of an asset. */
export function assetPath(sha256: string, contentType: string): string {
  return generatedEntryOf('asset', { sha256, ext: extensionFor(contentType) });
}
