import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { isSafeEntryName } from '../api/paths.js';
import { openArchive } from '../archive/open-archive.js';
import type { ZipReader } from '../archive/zip-reader.js';
import { INDEX_PATH } from '../site/index-html.js';
import { VIEW_CSP } from '../site/page-views.js';

export interface ServeArchiveOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
}

export interface ArchiveServer {
  /** e.g. http://127.0.0.1:41234/ */
  url: string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
  png: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  bmp: 'image/bmp',
  svg: 'image/svg+xml',
  ico: 'image/x-icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  eot: 'application/vnd.ms-fontobject',
};

/** By extension, as a browser opening the unzipped files would decide; unknown types are downloads. */
export function contentTypeFor(name: string): string {
  return TYPES[/\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase() ?? ''] ?? 'application/octet-stream';
}

/**
 * Serves an archive on loopback, entry by entry straight from the zip: nothing is extracted. Only
 * names the zip lists and that are plain relative paths are served; everything else is a 404, so a
 * request cannot reach outside the archive. The same policy as the viewable copies keeps every
 * page from loading anything but the archive's own entries.
 */
export async function serveArchive(zipPath: string, options: ServeArchiveOptions = {}): Promise<ArchiveServer> {
  // Served straight from the zip's own index: the archive's entries, whatever the manifest lists.
  const archive = await openArchive(zipPath);
  const { zip } = archive;
  let port = 0;
  const server = createServer((req, res) => {
    if (!isOwnHost(req.headers.host, port)) {
      // DNS rebinding: a page on another site that points its own name at 127.0.0.1 reaches this
      // server, but its requests name that site as Host. They get nothing from the archive.
      res
        .writeHead(421, { 'content-type': 'text/plain; charset=utf-8' })
        .end('this server answers only to its own address\n');
      return;
    }
    handle(zip, req, res).catch(() => {
      if (!res.headersSent)
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('cannot read this entry\n');
      else res.destroy();
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    archive.close();
    throw error;
  }
  port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).finally(() => archive.close());
      return closing;
    },
  };
}

async function handle(zip: ZipReader, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('read only\n');
    return;
  }
  const name = entryNameOf(req.url ?? '/');
  const info = name === undefined ? undefined : zip.entries.get(name);
  if (name === undefined || info === undefined) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not in this archive\n');
    return;
  }
  res.writeHead(200, {
    'content-type': contentTypeFor(name),
    'content-length': String(info.uncompressedSize),
    'content-security-policy': VIEW_CSP,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-cache',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  await pipeline(await zip.openEntry(info), res);
}

/** Host names this server answers to: its loopback address or localhost, with its own port. */
export function isOwnHost(host: string | undefined, port: number): boolean {
  if (host === undefined) return false;
  const value = host.toLowerCase();
  const names = ['127.0.0.1', 'localhost', '[::1]'];
  return names.some((name) => value === `${name}:${port}` || (port === 80 && value === name));
}

/** The entry a request path names, or undefined when it cannot name one safely. */
export function entryNameOf(url: string): string | undefined {
  const path = url.split(/[?#]/)[0] ?? '';
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  if (decoded === '/' || decoded === '') return INDEX_PATH;
  if (!decoded.startsWith('/')) return undefined;
  const name = decoded.slice(1);
  return isSafeEntryName(name) ? name : undefined;
}
