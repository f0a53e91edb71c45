import { join } from 'node:path';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import type { Format } from '../../src/crawl/crawl-account.js';
import { send } from '../fake-service/helpers.js';

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
 * (with only `formats` when given, as `export --formats` does).
 */
export async function exportSample(dir: string, formats?: ReadonlySet<Format>): Promise<string> {
  const service: FakeService = await startFakeService({ seed: 1, now: () => 1_300_000_000_000 });
  try {
    for (const element of EXTRA_ELEMENTS) {
      const response = await send(
        service,
        'POST',
        `prototypes/${EXTRA_PAGE.prototype}/pages/${EXTRA_PAGE.page}/elements.json`,
        element,
      );
      if (response.status !== 201) throw new Error(`adding an element answered ${response.status}`);
    }
    const out = join(dir, 'archive.zip');
    const result = await exportAccount({
      out,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      ...(formats !== undefined ? { formats } : {}),
    });
    if (!result.complete) throw new Error('the sample export is incomplete');
    return out;
  } finally {
    await service.close();
  }
}
