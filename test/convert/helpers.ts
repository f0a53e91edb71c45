import { join } from 'node:path';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import type { Format } from '../../src/crawl/crawl-account.js';
import { send } from '../fake-service/helpers.js';
import { keptCopies } from '../helpers/kept-files.js';

/**
 * Elements added to the sample account before it is exported, for what the sample data does not
 * have: a type no table knows, a style, texts with newlines, emoji and characters XML 1.0 cannot
 * hold (U+0001, U+FFFE and an unpaired surrogate: 3 dropped), and a target naming no page.
 */
export const EXTRA_ELEMENTS = [
  {
    type: 'carousel',
    position: { x: 150, y: 20 },
    dimensions: { width: 140, height: 50 },
    text: 'Slides\u0001 <one> & "two"\nthird 🎠\uFFFE\uD800 end',
    style: { fill: '#ffcc00', opacity: 0.5, fontFamily: 'Georgia', fontSize: 14, color: '#333333', fontWeight: 'bold' },
  },
  {
    type: 'dropdown',
    position: { x: 10.5, y: 5.25 },
    dimensions: { width: 100, height: 24 },
    text: "Choose 'one'\r\n\ttab",
    target: 'page999',
  },
  {
    type: 'textfield',
    position: { x: 10, y: 40 },
    dimensions: { width: 120, height: 24 },
    text: 'Name &amp; <b>bold</b>',
    style: 'background-color: #eeeeff; opacity: 80%; font-size: 11px; font-style: italic',
  },
] as const;

export const EXTRA_PAGE = { prototype: '3', page: 'page0001' } as const;
export const DROPPED_CHARACTERS = 3;

/** What XML 1.0 can hold of a text: the extra elements' U+0001, U+FFFE and lone U+D800 go. */
export function withoutNonXml(text: string): string {
  return [...text].filter((char) => !['\u0001', '\uFFFE', '\uD800'].includes(char)).join('');
}

/**
 * The sample account with EXTRA_ELEMENTS on prototype 3's first page, exported to `dir/archive.zip`
 * (with only `formats` when given, as `export --formats` does). The export is the same each time
 * (the seed, the elements and the service's clock are fixed), so a test worker makes it once and
 * hands each caller a copy of its own.
 */
export async function exportSample(dir: string, formats?: ReadonlySet<Format>): Promise<string> {
  const key = `convert-sample:${formats === undefined ? 'all' : [...formats].sort().join(',')}`;
  const [archive] = await keptCopies(
    key,
    async (own) => {
      await exportAdding(own, EXTRA_PAGE.prototype, () => EXTRA_PAGE.page, EXTRA_ELEMENTS, formats);
      return ['archive.zip'];
    },
    dir,
  );
  return archive as string;
}

/**
 * The sample account with `elements` added to prototype 42's first page (whichever id it has),
 * exported to `dir/archive.zip`: the archive, that page, and each element's new id in order.
 */
export function exportWithElements(
  dir: string,
  elements: readonly object[],
): Promise<{ archive: string; page: string; ids: string[] }> {
  return exportAdding(
    dir,
    '42',
    (pages) => String(Array.isArray(pages) ? pages[0] : Object.keys(pages as object)[0]),
    elements,
  );
}

async function exportAdding(
  dir: string,
  prototype: string,
  pageOf: (pages: unknown) => string,
  elements: readonly object[],
  formats?: ReadonlySet<Format>,
): Promise<{ archive: string; page: string; ids: string[] }> {
  const service: FakeService = await startFakeService({ seed: 1, now: () => 1_300_000_000_000 });
  try {
    const page = pageOf(await (await send(service, 'GET', `prototypes/${prototype}/pages.json`)).json());
    const ids: string[] = [];
    for (const element of elements) {
      const response = await send(service, 'POST', `prototypes/${prototype}/pages/${page}/elements.json`, element);
      if (response.status !== 201) throw new Error(`adding an element answered ${response.status}`);
      ids.push(/\/elements\/(\w+)\.json$/.exec(response.headers.get('location') ?? '')?.[1] ?? '(no id)');
    }
    const archive = join(dir, 'archive.zip');
    const result = await exportAccount({
      out: archive,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      ...(formats !== undefined ? { formats } : {}),
    });
    if (!result.complete) throw new Error('the sample export is incomplete');
    return { archive, page, ids };
  } finally {
    await service.close();
  }
}
