import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { startFakeService, STATIC_PATHS } from '../../src/fake-service/index.js';
import { get, getJson } from './helpers.js';

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService();
});
afterAll(() => service.close());

const JSON_TYPE = 'application/json; charset=utf-8';

describe('every GET of service-api.md section 4', () => {
  const cases: Array<[string, string, (body: unknown) => void]> = [
    ['prototypes.json', JSON_TYPE, (b) => expect(b).toEqual([3, 17, 42, 1001, 1002])],
    [
      'prototypes/3.json',
      JSON_TYPE,
      (b) => expect(b).toMatchObject({ id: 3, prototypeData: { id: 3, name: 'foo type', lastUser: 'Volker' } }),
    ],
    ['prototypes/3/pages.json', JSON_TYPE, (b) => expect(b).toEqual(['page0001', 'page7830', 'page648229105'])],
    [
      'prototypes/3/pages/page7830.json',
      JSON_TYPE,
      (b) =>
        expect(b).toEqual({ id: 'page7830', layers: ['layer1', 'layer22'], name: `<b>Checkout</b> & "Pay" 'now'` }),
    ],
    ['prototypes/3/pages/page7830.html', 'application/xhtml+xml; charset=utf-8', (b) => expect(b).toMatch(/^<\?xml /)],
    ['prototypes/3/pages/page7830.png', 'image/png', (b) => expect(b).toBeInstanceOf(Buffer)],
    ['prototypes/3/layers.json', JSON_TYPE, (b) => expect(b).toEqual(['layer1', 'layer22'])],
    [
      'prototypes/3/layers/layer1.json',
      JSON_TYPE,
      (b) => expect(b).toEqual({ id: 'layer1', name: 'Header 🎩 <nav> & "menu"' }),
    ],
    [
      'prototypes/3/pages/page0001/elements.json',
      JSON_TYPE,
      (b) => expect(b).toEqual(['element3', 'element4', 'element5']),
    ],
    ['prototypes/3/layers/layer1/elements.json', JSON_TYPE, (b) => expect(b).toEqual(['element1', 'element2'])],
    [
      'prototypes/3/pages/page0001/elements/element3.json',
      JSON_TYPE,
      (b) =>
        expect(b).toMatchObject({
          id: 'element3',
          type: expect.any(String),
          position: { x: expect.any(Number), y: expect.any(Number) },
          dimensions: { width: expect.any(Number), height: expect.any(Number) },
          target: 'page7830',
        }),
    ],
    [
      'prototypes/3/layers/layer1/elements/element1.json',
      JSON_TYPE,
      (b) => expect(b).toMatchObject({ id: 'element1', position: {}, dimensions: {} }),
    ],
    ['prototypes/3/discussions.json', JSON_TYPE, (b) => expect(b).toEqual([1, 2, 3])],
    ['prototypes/3/pages/page0001/discussions.json', JSON_TYPE, (b) => expect(b).toEqual([1, 3])],
    [
      'prototypes/3/discussions/2.json',
      JSON_TYPE,
      (b) => expect(b).toMatchObject({ id: 2, prototypeId: 3, pageId: 'page7830', deleted: -1 }),
    ],
  ];

  test.each(cases)('GET %s', async (path, contentType, check) => {
    const res = await get(service, path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(contentType);
    const lastModified = res.headers.get('last-modified');
    expect(lastModified).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    const body = Buffer.from(await res.arrayBuffer());
    expect(Number(res.headers.get('content-length'))).toBe(body.length);
    if (contentType === JSON_TYPE) check(JSON.parse(body.toString('utf8')));
    else if (contentType === 'image/png') check(body);
    else check(body.toString('utf8'));
  });
});

describe('shapes from api-notes.md', () => {
  test('prototype metadata has milestones unsorted, the documented fields and a string created', async () => {
    const proto = await getJson<{
      versions: { milestones: Array<Record<string, unknown>> };
      prototypeData: Record<string, unknown>;
    }>(service, 'prototypes/3.json');
    expect(proto.versions.milestones.map((m) => m.revision)).toEqual([1, 5, 4, 2, 3, 6]);
    for (const m of proto.versions.milestones) {
      expect(Object.keys(m)).toEqual(['revision', 'created', 'name', 'user']);
      expect(m.created).toMatch(/^\d{13}$/);
    }
    expect(proto.versions.milestones[0]).toMatchObject({ name: 'autosaved', user: { id: 0, name: 'System' } });
    expect(Object.keys(proto.prototypeData)).toEqual(['lastModification', 'id', 'lastUser', 'name']);
    expect(proto.prototypeData.lastModification).toBeTypeOf('number');
  });

  test('one prototype has no milestones at all', async () => {
    const proto = await getJson<{ versions: { milestones: unknown[] } }>(service, 'prototypes/17.json');
    expect(proto.versions.milestones).toEqual([]);
  });

  test('the legacy prototype serves pages.json in the old object form', async () => {
    expect(await getJson(service, 'prototypes/42/pages.json')).toEqual({
      page2200: 'MyPage 3',
      page15: 'Kontakt & Impressum',
    });
  });

  test('discussions: all fields, several entries, first entry records the title, page lists consistent', async () => {
    const discussion = await getJson<Record<string, unknown> & { entries: Array<{ text: string; timestamp: number }> }>(
      service,
      'prototypes/3/discussions/1.json',
    );
    expect(Object.keys(discussion)).toEqual([
      'id',
      'prototypeId',
      'pageId',
      'title',
      'positionX',
      'positionY',
      'timestamp',
      'entries',
      'readAt',
      'lastEntryDate',
      'deleted',
    ]);
    expect(discussion.entries.length).toBeGreaterThan(1);
    expect(discussion.entries[0]!.text).toContain(String(discussion.title));
    expect(discussion.lastEntryDate).toBe(discussion.entries.at(-1)!.timestamp);
    for (const protoId of await getJson<number[]>(service, 'prototypes.json')) {
      const all = await getJson<number[]>(service, `prototypes/${protoId}/discussions.json`);
      const pages = await getJson<string[] | Record<string, string>>(service, `prototypes/${protoId}/pages.json`);
      const perPage: number[] = [];
      for (const pageId of Array.isArray(pages) ? pages : Object.keys(pages)) {
        for (const id of await getJson<number[]>(service, `prototypes/${protoId}/pages/${pageId}/discussions.json`)) {
          const d = await getJson<{ pageId: string }>(service, `prototypes/${protoId}/discussions/${id}.json`);
          expect(d.pageId).toBe(pageId);
          perPage.push(id);
        }
      }
      expect(perPage.sort((a, b) => a - b)).toEqual([...all].sort((a, b) => a - b));
    }
  });

  test('an empty page, an empty layer and a layer shared by several pages', async () => {
    expect(await getJson(service, 'prototypes/3/pages/page648229105/elements.json')).toEqual([]);
    expect(await getJson(service, 'prototypes/3/layers/layer22/elements.json')).toEqual([]);
    const start = await getJson<{ layers: string[] }>(service, 'prototypes/3/pages/page0001.json');
    const checkout = await getJson<{ layers: string[] }>(service, 'prototypes/3/pages/page7830.json');
    expect(start.layers).toContain('layer1');
    expect(checkout.layers).toContain('layer1');
  });
});

describe('conditional GET', () => {
  test('If-Modified-Since at Last-Modified gives 304 without body; an older date gives 200', async () => {
    const first = await get(service, 'prototypes/3.json');
    const lastModified = first.headers.get('last-modified')!;
    const notModified = await get(service, 'prototypes/3.json', undefined, { 'if-modified-since': lastModified });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');
    const older = new Date(Date.parse(lastModified) - 1000).toUTCString();
    const modified = await get(service, 'prototypes/3.json', undefined, { 'if-modified-since': older });
    expect(modified.status).toBe(200);
    const garbage = await get(service, 'prototypes/3.json', undefined, { 'if-modified-since': 'yesterday' });
    expect(garbage.status).toBe(200);
  });

  test('the PNG and static assets honour it too', async () => {
    for (const url of [
      `${service.baseUrl}${STATIC_PATHS.css}`,
      `${service.baseUrl}/rabbit/api/prototypes/3/pages/page0001.png?api_key=${service.keys.readOnly}`,
    ]) {
      const first = await fetch(url);
      await first.arrayBuffer();
      const second = await fetch(url, { headers: { 'if-modified-since': first.headers.get('last-modified')! } });
      expect(second.status).toBe(304);
    }
  });
});

describe('unknown paths and ids', () => {
  test.each([
    'prototypes/999.json',
    'prototypes/03.json',
    'prototypes/3/pages/page1.json',
    'prototypes/3/pages/page01.json',
    'prototypes/3/pages/page0001.xhtml',
    'prototypes/3/layers/layer2.json',
    'prototypes/3/pages/page0001/elements/element1.json',
    'prototypes/3/layers/layer1/elements/element3.json',
    'prototypes/3/discussions/4.json',
    'prototypes/3/pages/page9/discussions.json',
    'prototypes/3/pages/page0001/../../../x.json',
    'prototypes/3',
    'nothing-here',
  ])('404 for %s', async (path) => {
    const res = await get(service, path);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'not_found' });
  });

  test('405 with Allow for a method a route does not answer', async () => {
    const res = await fetch(`${service.baseUrl}/rabbit/api/prototypes.json?api_key=${service.keys.readWrite}`, {
      method: 'POST',
      body: '{}',
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    // Without its suffix an element path exists for DELETE only (service-api.md 4.4).
    const bare = await get(service, 'prototypes/3/pages/page0001/elements/element3');
    expect(bare.status).toBe(405);
    expect(bare.headers.get('allow')).toBe('DELETE');
  });

  test('HEAD answers headers only', async () => {
    const res = await fetch(`${service.baseUrl}/rabbit/api/prototypes/3.json?api_key=${service.keys.readWrite}`, {
      method: 'HEAD',
    });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await res.text()).toBe('');
  });
});

describe('static assets', () => {
  test.each([
    [STATIC_PATHS.css, 'text/css; charset=utf-8'],
    [STATIC_PATHS.logo, 'image/png'],
    [STATIC_PATHS.icon, 'image/png'],
    [STATIC_PATHS.background, 'image/png'],
    [STATIC_PATHS.button, 'image/png'],
  ])('%s is served without a key', async (path, type) => {
    const res = await fetch(`${service.baseUrl}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    expect(res.headers.get('last-modified')).not.toBeNull();
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
  });
});
