import { execFile } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type BrowserContext, launchChromium } from '../browser/index.js';
import { CHROMIUM, requireTool } from '../helpers/tools.js';

/**
 * What the hostile-page tests stand up around an export: a listener on another origin that stands
 * for the rest of the internet (it must hear nothing), and a front for the fake service that
 * answers page renderings with pages written to act.
 */
requireTool(CHROMIUM);
requireTool('unzip');

export const PAGE_RENDERING = /^\/rabbit\/api\/prototypes\/\d+\/pages\/[^/]+\.html$/;

export interface Listening {
  /** http://localhost:PORT for the listener, http://127.0.0.1:PORT for the front. */
  origin: string;
  close(): Promise<void>;
}

/** Every request the listener hears goes into `heard`. */
export async function startListener(heard: string[]): Promise<Listening> {
  const server = createServer((req, res) => {
    heard.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html' }).end('<title>listener</title>');
  });
  return { origin: `http://localhost:${await listen(server)}`, close: () => closed(server) };
}

export interface FrontOptions {
  /** The fake service's address, asked per request: the service may start after the front. */
  upstream(): string;
  /** The page to answer a page rendering's path with; undefined passes the service's own through. */
  pageFor(path: string): string | undefined;
  /** Other paths the front answers itself, with their type and body. */
  files?: ReadonlyMap<string, { type: string; body: string }>;
}

export async function startHostileFront(options: FrontOptions): Promise<Listening> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://front').pathname;
    const own = (type: string, body: string): void => {
      const bytes = Buffer.from(body, 'utf8');
      res.writeHead(200, { 'content-type': type, 'content-length': String(bytes.length) }).end(bytes);
    };
    const file = options.files?.get(path);
    if (file !== undefined) return own(file.type, file.body);
    const base = options.upstream();
    const upstream = request(
      `${base}${req.url ?? '/'}`,
      { method: req.method, headers: { ...req.headers, host: new URL(base).host, 'accept-encoding': 'identity' } },
      (answer) => {
        const html = PAGE_RENDERING.test(path) && answer.statusCode === 200 ? options.pageFor(path) : undefined;
        if (html === undefined) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        answer.resume();
        own('application/xhtml+xml; charset=utf-8', html);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  return { origin: `http://127.0.0.1:${await listen(server)}`, close: () => closed(server) };
}

/**
 * The export unzipped into `dir/unzipped`, and a fresh context of Chromium with no tab open yet:
 * the visits open their own (visitEach), each noting the URLs it asks for, and a tab costs the
 * browser a renderer to start and to end.
 */
export async function openUnzipped(out: string, dir: string): Promise<{ root: string; browser: BrowserContext }> {
  const root = join(dir, 'unzipped');
  await promisify(execFile)('unzip', ['-q', out, '-d', root]);
  return { root, browser: await launchChromium(CHROMIUM) };
}

/** Closes, in order, whatever of these a test got to start before it ended or failed. */
export async function closeAll(...started: ({ close(): Promise<void> } | undefined)[]): Promise<void> {
  for (const one of started) await one?.close();
}

function listen(server: Server): Promise<number> {
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done((server.address() as AddressInfo).port)));
}

function closed(server: Server): Promise<void> {
  return new Promise((done) => server.close(() => done()));
}
