import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { isSafeEntryName } from '../api/paths.js';
import { openArchive } from '../archive/open-archive.js';
import { Transform } from 'node:stream';
import type { ZipEntryInfo, ZipReader } from '../zip/zip-reader.js';
import { MANIFEST_PATH } from '../manifest/types.js';
import { escapeText } from '../core/xml-escape.js';
import { INDEX_PATH } from '../site/index-html.js';
import { EntryDigests, type EntryCheck } from './entry-digests.js';
import { createViewGate } from './view-gate.js';
import { VIEW_HEADERS } from '../site/view-policy.js';
import { SEARCH_BOX_PATH, searchBoxScript } from '../site/search-box.js';
import { SEARCH_ENDPOINT, searchEndpoint, searchPageHeaders, type SearchRun } from './search-endpoint.js';
import { HeardErrors, isOwnPage, ownPages, type OwnPages } from './own-pages.js';
import { ViewedPrototypes } from './viewed-prototypes.js';
import type { ManifestHead } from '../manifest/manifest-stream.js';

export interface ServeArchiveOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Hears every entry refused; the CLI logs them. */
  onEvent?(event: ViewEvent): void;
  /**
   * Entries up to this size (default 16 MiB) are read whole and checked before a byte is sent;
   * larger ones are checked in a first reading, then streamed with the same check.
   */
  checkedInMemory?: number;
  /** The search `/_search` runs: the command's own unless a test passes one it can hold. */
  search?: SearchRun;
}

/** Why an entry was not served. */
export type RefusalReason = 'checksum' | 'unreadable' | 'unlisted';

export interface ViewEvent {
  type: 'refused';
  /** The entry's name in the zip. */
  entry: string;
  reason: RefusalReason;
  status: number;
}

export interface ArchiveServer {
  /** e.g. http://127.0.0.1:41234/<token>/: the address carries the key to the archive (view-gate.ts). */
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
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase() ?? '';
  // Only the table's own names: a plain object also answers `.constructor`.
  return Object.hasOwn(TYPES, extension) ? (TYPES[extension] as string) : 'application/octet-stream';
}

/**
 * Serves an archive on loopback, entry by entry straight from the zip: nothing is extracted. Only
 * names the zip lists and that are plain relative paths are served; everything else is a 404, so a
 * request cannot reach outside the archive. The same policy as the viewable copies keeps every
 * page from loading anything but the archive's own entries. Every entry is checked against the
 * SHA-256 the manifest records before it is served: a damaged one is refused, never sent in part
 * or as it is. index.html and the overview pages, the only pages that run a script, are not the
 * archive's: the server renders them from its data (own-pages.ts).
 */
export async function serveArchive(zipPath: string, options: ServeArchiveOptions = {}): Promise<ArchiveServer> {
  // Served straight from the zip's own index: the archive's entries, whatever the manifest lists.
  const archive = await openArchive(zipPath);
  const { zip } = archive;
  const filing = EntryDigests.filing(zip.index, (entry, owner, position) => prototypes.file(entry, owner, position));
  const { digests } = filing;
  const prototypes = new ViewedPrototypes(zip, digests, archive.name);
  const errors = new HeardErrors();
  let head: ManifestHead;
  try {
    // The manifest streams by once: the digests every entry is checked against, and the
    // prototypes and errors the viewer's own pages are rendered from.
    head = await archive.manifest({ ...filing.visitor, prototype: prototypes.prototype, error: errors.hear });
  } catch (error) {
    archive.close();
    throw error;
  }
  const pages = ownPages(head.source.baseUrl, prototypes, errors);
  const onEvent = options.onEvent ?? (() => undefined);
  let port = 0;
  const gate = createViewGate();
  const search = searchEndpoint(zipPath, options.search);
  const server = createServer((req, res) => {
    if (!isOwnHost(req.headers.host, port)) {
      // DNS rebinding: a page on another site that points its own name at 127.0.0.1 reaches this
      // server, but its requests name that site as Host. They get nothing from the archive.
      res
        .writeHead(421, { 'content-type': 'text/plain; charset=utf-8' })
        .end('this server answers only to its own address\n');
      return;
    }
    if (!gate.admit(req, res)) return;
    const answer = (req.url ?? '').startsWith(SEARCH_ENDPOINT)
      ? search(req, res)
      : handle(
          { zip, digests, pages, onEvent, inMemory: options.checkedInMemory ?? CHECKED_IN_MEMORY },
          req,
          res,
          gate.prefix,
        );
    answer.catch(() => {
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
    url: `http://127.0.0.1:${port}${gate.prefix}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).finally(() => archive.close());
      return closing;
    },
  };
}

const CHECKED_IN_MEMORY = 16 * 1024 * 1024;

/** What every request is answered from. */
interface Served {
  zip: ZipReader;
  digests: EntryDigests;
  pages: OwnPages;
  onEvent: (event: ViewEvent) => void;
  inMemory: number;
}

async function handle(
  { zip, digests, pages, onEvent, inMemory }: Served,
  req: IncomingMessage,
  res: ServerResponse,
  prefix: string,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('read only\n');
    return;
  }
  const name = entryNameOf(req.url ?? '/');
  if (name === SEARCH_BOX_PATH) {
    serveSearchBox(req, res);
    return;
  }
  if (name !== undefined && isOwnPage(name)) {
    await serveOwnPage(pages, name, req, res, `http://${req.headers.host as string}${prefix}`);
    return;
  }
  const hit = name === undefined ? undefined : zip.index.lookup(name);
  if (name === undefined || hit === undefined) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not in this archive\n');
    return;
  }
  // The manifest is the one entry it cannot list; the zip's CRC-32 is its check.
  if (name !== MANIFEST_PATH && !digests.lists(hit.position)) {
    refuse(res, name, 'unlisted', onEvent);
    return;
  }
  const info = zip.entries.get(name) as ZipEntryInfo;
  const answer: EntryAnswer = {
    req,
    res,
    name,
    info,
    check: () => (name === MANIFEST_PATH ? undefined : digests.checker(hit.position)),
    head: {
      ...VIEW_HEADERS,
      'content-type': contentTypeFor(name),
      'content-length': String(info.uncompressedSize),
    },
    onEvent,
  };
  await (info.uncompressedSize <= inMemory ? serveWhole(zip, answer) : serveLarge(zip, answer));
}

/** An entry being answered: its bytes, the check they must pass, and the headers they go with. */
interface EntryAnswer {
  req: IncomingMessage;
  res: ServerResponse;
  name: string;
  info: ZipEntryInfo;
  /** A new check against what the manifest records; none for the manifest itself. */
  check: () => EntryCheck | undefined;
  head: Record<string, string>;
  onEvent: (event: ViewEvent) => void;
}

/** The tool's own script, whatever the archive holds under that name: the one script its pages may run here. */
function serveSearchBox(req: IncomingMessage, res: ServerResponse): void {
  const body = Buffer.from(searchBoxScript(), 'utf8');
  const type = { 'content-type': 'text/javascript; charset=utf-8', 'content-length': String(body.length) };
  res.writeHead(200, { ...VIEW_HEADERS, ...type }).end(req.method === 'HEAD' ? undefined : body);
}

/**
 * index.html or an overview page, rendered by the server from the archive's data (own-pages.ts),
 * whatever the archive holds under its name: the only answers let run a script, the box's.
 */
async function serveOwnPage(
  pages: OwnPages,
  name: string,
  req: IncomingMessage,
  res: ServerResponse,
  root: string,
): Promise<void> {
  const page = await pages.render(name);
  if (page === undefined) {
    res.writeHead(404, { ...VIEW_HEADERS, 'content-type': 'text/plain; charset=utf-8' }).end('not in this archive\n');
    return;
  }
  const body = Buffer.from(page, 'utf8');
  const type = { 'content-type': contentTypeFor(name), 'content-length': String(body.length) };
  res.writeHead(200, { ...searchPageHeaders(root), ...type }).end(req.method === 'HEAD' ? undefined : body);
}

/** Read whole and checked before a byte is sent. */
async function serveWhole(
  zip: ZipReader,
  { req, res, name, info, check: checker, head, onEvent }: EntryAnswer,
): Promise<void> {
  const check = checker();
  let body: Buffer;
  try {
    body = await readWhole(zip, info);
  } catch {
    refuse(res, name, 'unreadable', onEvent);
    return;
  }
  check?.update(body);
  if (check && !check.matches()) refuse(res, name, 'checksum', onEvent);
  else res.writeHead(200, head).end(req.method === 'HEAD' ? undefined : body);
}

/**
 * Too large to hold: checked in a first pass, then streamed with the same check, and the
 * connection cut (never ended cleanly) if the second reading differs from the first.
 */
async function serveLarge(
  zip: ZipReader,
  { req, res, name, info, check: checker, head, onEvent }: EntryAnswer,
): Promise<void> {
  const check = checker();
  try {
    for await (const chunk of await zip.openEntry(info)) check?.update(chunk as Buffer);
  } catch {
    refuse(res, name, 'unreadable', onEvent);
    return;
  }
  if (check && !check.matches()) {
    refuse(res, name, 'checksum', onEvent);
    return;
  }
  res.writeHead(200, head);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const again = checker();
  await pipeline(
    await zip.openEntry(info),
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        again?.update(chunk);
        done(null, chunk);
      },
      flush(done) {
        done(again && !again.matches() ? new Error(`${name} changed while it was served`) : null);
      },
    }),
    res,
  );
}

async function readWhole(zip: ZipReader, info: ZipEntryInfo): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await zip.openEntry(info)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const REFUSALS: Record<RefusalReason, { status: number; says: string }> = {
  checksum: { status: 500, says: 'does not match the SHA-256 the manifest records for it: the archive is damaged' },
  unreadable: { status: 500, says: 'cannot be read from the zip (its compressed data or CRC-32 is damaged)' },
  unlisted: { status: 404, says: 'is not listed in the archive’s manifest, so it cannot be checked' },
};

/** Answers with an error status and a page that says which entry and why; the caller's log hears it too. */
function refuse(res: ServerResponse, entry: string, reason: RefusalReason, onEvent: (event: ViewEvent) => void): void {
  const { status, says } = REFUSALS[reason];
  onEvent({ type: 'refused', entry, reason, status });
  const page = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Entry not served</title></head>
<body><h1>Entry not served</h1><p><code>${escapeText(entry)}</code> ${escapeText(says)}.</p>
<p>Run <code>rabbit-export verify</code> on the archive to see every damaged entry.</p></body></html>
`;
  res.writeHead(status, { ...VIEW_HEADERS, 'content-type': 'text/html; charset=utf-8' }).end(page);
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
