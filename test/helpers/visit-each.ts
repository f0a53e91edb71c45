import type { BrowserContext, Page } from '../browser/index.js';

/** A tab a visit runs in, and every URL that tab asked for since the visit began. */
export interface Tab {
  page: Page;
  requests: string[];
}

/** Tabs open at once: their waits overlap, and two cores still keep up with the pages. */
const TABS = 4;

/**
 * Runs `visit` for each of `items`, in a few tabs of `browser` at once. A visit that gives a page
 * time to act (a settle time after loading, after a click) waits for its own tab only, so the
 * waits overlap instead of adding up; each visit sees only the requests of its own tab. The
 * results are in the order of `items`.
 */
export async function visitEach<T, R>(
  browser: BrowserContext,
  items: readonly T[],
  visit: (item: T, tab: Tab) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const work = async (): Promise<void> => {
    const page = await browser.newPage();
    const tab: Tab = { page, requests: [] };
    page.on('request', (request) => tab.requests.push(request.url()));
    try {
      for (let index = next++; index < items.length; index = next++) {
        tab.requests.length = 0;
        results[index] = await visit(items[index] as T, tab);
      }
    } finally {
      await page.close();
    }
  };
  await Promise.all(Array.from({ length: Math.min(TABS, items.length) }, work));
  return results;
}
