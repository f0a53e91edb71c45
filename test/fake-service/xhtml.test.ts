import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { FOREIGN_STYLESHEET, startFakeService } from '../../src/fake-service/index.js';
import { apiUrl, get } from './helpers.js';

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService({ pagesNameHost: true });
});
afterAll(() => service.close());

/**
 * Well-formed enough: one root, every tag closed in order, attributes quoted, and no bare `&` or
 * `<` in text. Not a full XML parser, but it catches every escaping mistake a renderer makes.
 */
function assertWellFormed(xml: string): void {
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, '').replace(/^<!DOCTYPE[^>]*>\s*/, '');
  const stack: string[] = [];
  let roots = 0;
  const token =
    /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>|<|&(?!(?:#\d+|#x[0-9a-fA-F]+|amp|lt|gt|quot|apos);)/g;
  for (const match of body.matchAll(token)) {
    const [whole, closing, name, , selfClosing] = match;
    if (whole === '<' || whole === '&')
      throw new Error(`bare ${whole} at ${match.index}: ${body.slice(match.index, match.index + 40)}`);
    if (closing) {
      const open = stack.pop();
      if (open !== name) throw new Error(`</${name}> closes <${open}>`);
    } else if (!selfClosing) {
      if (stack.length === 0) roots++;
      stack.push(name!);
    } else if (stack.length === 0) {
      roots++;
    }
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack.join('> <')}>`);
  if (roots !== 1) throw new Error(`${roots} root elements`);
}

function references(text: string): string[] {
  const attrs = [...text.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  const css = [...text.matchAll(/url\(\s*["']?([^"')]+)["']?\s*\)/g)].map((m) => m[1]!);
  return [...attrs, ...css];
}

describe('page XHTML', () => {
  test.each([
    ['3', 'page0001'],
    ['3', 'page7830'],
    ['3', 'page648229105'],
    ['17', 'page10'],
    ['42', 'page2200'],
  ])('prototype %s %s is well-formed', async (protoId, pageId) => {
    const res = await get(service, `prototypes/${protoId}/pages/${pageId}.html`);
    expect(res.headers.get('content-type')).toBe('application/xhtml+xml; charset=utf-8');
    assertWellFormed(await res.text());
  });

  test('the checker itself rejects broken markup', () => {
    expect(() => assertWellFormed('<html><b>x</html>')).toThrow('</html> closes <b>');
    expect(() => assertWellFormed('<html>a & b</html>')).toThrow('bare &');
    expect(() => assertWellFormed('<html>a < b</html>')).toThrow('bare <');
    expect(() => assertWellFormed('<html/><html/>')).toThrow('2 root elements');
  });

  test('names with markup, quotes and emoji are escaped and survive a round trip', async () => {
    const text = await (await get(service, 'prototypes/3/pages/page7830.html')).text();
    expect(text).not.toContain('<b>Checkout');
    const title = /<title>(.*)<\/title>/.exec(text)![1]!;
    const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };
    const decoded = title.replace(/&(lt|gt|amp|quot);/g, (_, name: string) => named[name] ?? '');
    expect(decoded).toBe(`<b>Checkout</b> & "Pay" 'now' – foo type`);
    const shop = await (await get(service, 'prototypes/17/pages/page1.html')).text();
    expect(shop).toContain('🛒');
  });

  test('draws every visible element: its own and those of its layers', async () => {
    const text = await (await get(service, 'prototypes/3/pages/page7830.html')).text();
    const ids = [...text.matchAll(/class="element [^"]*" id="(element\d+)"/g)].map((m) => m[1]);
    expect(ids).toEqual(['element1', 'element2', 'element6', 'element7']);
    expect(text).toContain('<a href="page0001.html">');
  });

  test('references assets in every form; all on the service host resolve without a key, recursively', async () => {
    const pageUrl = apiUrl(service, 'prototypes/3/pages/page0001.html');
    const text = await (await fetch(pageUrl)).text();
    const refs = references(text);
    expect(refs).toContain('/rabbit/static/css/page.css');
    expect(refs).toContain(`${service.baseUrl}/rabbit/static/img/logo.png`);
    expect(refs.some((ref) => ref.startsWith('../'))).toBe(true);
    expect(refs).toContain(FOREIGN_STYLESHEET);
    const host = new URL(service.baseUrl).host;
    const queue = refs
      .map((ref) => new URL(ref, pageUrl))
      .filter((url) => url.host === host && url.pathname.startsWith('/rabbit/static/'));
    const seen = new Set<string>();
    for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
      if (seen.has(url.pathname)) continue;
      seen.add(url.pathname);
      const res = await fetch(new URL(url.pathname, service.baseUrl));
      expect(res.status, url.pathname).toBe(200);
      if (res.headers.get('content-type')?.startsWith('text/css')) {
        for (const ref of references(await res.text())) queue.push(new URL(ref, url));
      } else {
        await res.arrayBuffer();
      }
    }
    expect([...seen].sort()).toEqual([
      '/rabbit/static/css/page.css',
      '/rabbit/static/img/bg.png',
      '/rabbit/static/img/button.png',
      '/rabbit/static/img/icon.png',
      '/rabbit/static/img/logo.png',
    ]);
  });
});
