import { describe, expect, test } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { writeRequests } from '../../src/fake-service/index.js';
import { useFakeService } from '../helpers/fake-service.js';
import { get, getJson, send } from './helpers.js';

interface Meta {
  versions: {
    milestones: Array<{ revision: number; created: string; name: string; user: { id: number; name: string } }>;
  };
  prototypeData: { lastModification: number; name: string };
}

let service: FakeService;
const START = Date.UTC(2023, 4, 1, 12, 0, 0, 250);
let clock = START;
useFakeService({ now: () => clock }, (fixture) => {
  clock = START;
  service = fixture.service;
});

describe.each([
  ['page', 'prototypes/3/pages/page0001', 'page0001'],
  ['layer', 'prototypes/3/layers/layer22', 'layer22'],
])('elements on a %s', (_kind, parentPath, parentId) => {
  test('POST creates: 201, the list as body, Location with the new id', async () => {
    const before = await getJson<string[]>(service, `${parentPath}/elements.json`);
    const res = await send(service, 'POST', `${parentPath}/elements.json`, {
      type: 'button',
      position: { x: 5, y: 6 },
      note: 'mine',
    });
    expect(res.status).toBe(201);
    const location = res.headers.get('location')!;
    const id = /\/elements\/(element\d+)\.json$/.exec(location)?.[1];
    expect(id).toBeDefined();
    expect(location).toBe(`${service.baseUrl}/rabbit/api/${parentPath}/elements/${id}.json`);
    const list = (await res.json()) as string[];
    expect(list).toEqual([...before, id]);
    expect(await getJson<string[]>(service, `${parentPath}/elements.json`)).toEqual(list);
    const created = await fetch(`${location}?api_key=${service.keys.readOnly}`);
    expect(await created.json()).toEqual({ id, type: 'button', position: { x: 5, y: 6 }, note: 'mine' });
    expect(service.store.element(3, parentId, id!)).toBeDefined();
  });

  test('new ids do not collide with any element of the prototype', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await send(service, 'POST', `${parentPath}/elements.json`, { type: 'text' });
      ids.add(/(element\d+)\.json$/.exec(res.headers.get('location')!)![1]!);
    }
    const existing = ['element1', 'element2', 'element3', 'element4', 'element5', 'element6', 'element7'];
    expect(ids.size).toBe(3);
    for (const id of ids) expect(existing).not.toContain(id);
  });

  test.each([
    ['no type', { position: { x: 1, y: 1 } }, 400],
    ['empty type', { type: '' }, 400],
    ['an array', [1, 2], 400],
    ['not JSON', '{"type": ', 400],
  ])('POST with %s -> %i', async (_what, body, status) => {
    const res = await send(service, 'POST', `${parentPath}/elements.json`, body);
    expect(res.status).toBe(status);
  });
});

describe('PUT', () => {
  const path = 'prototypes/3/pages/page0001/elements/element3.json';

  test('merges: omitted attributes keep their values; 200 with the element', async () => {
    const before = await getJson<Record<string, unknown>>(service, path);
    const res = await send(service, 'PUT', path, { position: { x: 1, y: 2 }, color: 'red', id: 'element999' });
    expect(res.status).toBe(200);
    const after = await res.json();
    expect(after).toEqual({ ...before, position: { x: 1, y: 2 }, color: 'red' });
    expect(await getJson(service, path)).toEqual(after);
  });

  test.each([
    ['prototypes/3/pages/page0001/elements/element1.json', 404],
    ['prototypes/3/pages/page9/elements/element3.json', 404],
    ['prototypes/99/pages/page0001/elements/element3.json', 404],
  ])('PUT %s -> %i', async (target, status) => {
    expect((await send(service, 'PUT', target, { color: 'red' })).status).toBe(status);
  });

  test('a non-string type is refused', async () => {
    expect((await send(service, 'PUT', path, { type: 7 })).status).toBe(400);
  });
});

describe('DELETE', () => {
  test.each([
    ['with .json', 'prototypes/3/pages/page0001/elements/element4.json'],
    ['without suffix', 'prototypes/3/pages/page0001/elements/element4'],
  ])('%s: 204 without body, then gone', async (_form, path) => {
    const res = await send(service, 'DELETE', path);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(await getJson(service, 'prototypes/3/pages/page0001/elements.json')).toEqual(['element3', 'element5']);
    expect((await get(service, 'prototypes/3/pages/page0001/elements/element4.json')).status).toBe(404);
    expect((await send(service, 'DELETE', path)).status).toBe(404);
  });

  test('on a layer', async () => {
    expect((await send(service, 'DELETE', 'prototypes/3/layers/layer1/elements/element2')).status).toBe(204);
    expect(await getJson(service, 'prototypes/3/layers/layer1/elements.json')).toEqual(['element1']);
  });
});

describe('a change', () => {
  test('bumps lastModification from now(), appends an autosaved milestone, and invalidates bodies', async () => {
    const before = await getJson<Meta>(service, 'prototypes/3.json');
    const oldPng = Buffer.from(await (await get(service, 'prototypes/3/pages/page0001.png')).arrayBuffer());
    const oldLastModified = (await get(service, 'prototypes/3/pages/page0001.json')).headers.get('last-modified')!;
    await send(service, 'PUT', 'prototypes/3/layers/layer1/elements/element1.json', { position: { x: 0, y: 0 } });
    const after = await getJson<Meta>(service, 'prototypes/3.json');
    expect(after.prototypeData.lastModification).toBe(clock);
    expect(after.versions.milestones).toHaveLength(before.versions.milestones.length + 1);
    expect(after.versions.milestones.at(-1)).toEqual({
      revision: 7,
      created: String(clock),
      name: 'autosaved',
      user: { id: 0, name: 'System' },
    });
    // The layer is on page0001, so the page picture changes with it.
    const newPng = Buffer.from(await (await get(service, 'prototypes/3/pages/page0001.png')).arrayBuffer());
    expect(newPng.equals(oldPng)).toBe(false);
    const conditional = await get(service, 'prototypes/3/pages/page0001.json', undefined, {
      'if-modified-since': oldLastModified,
    });
    expect(conditional.status).toBe(200);
  });

  test('two changes in the same instant still move Last-Modified forward by a whole second', async () => {
    service.store.touch(3);
    const first = (await get(service, 'prototypes/3.json')).headers.get('last-modified')!;
    service.store.touch(3);
    const second = await get(service, 'prototypes/3.json', undefined, { 'if-modified-since': first });
    expect(second.status).toBe(200);
    const meta = (await second.json()) as Meta;
    expect(meta.prototypeData.lastModification).toBe(Math.floor(clock / 1000) * 1000 + 1000);
  });

  test('the first change of a prototype without milestones makes revision 1', async () => {
    service.store.renamePrototype(17, 'renamed');
    const meta = await getJson<Meta>(service, 'prototypes/17.json');
    expect(meta.versions.milestones.map((m) => m.revision)).toEqual([1]);
    expect(meta.prototypeData.name).toBe('renamed');
  });

  test('other prototypes are untouched', async () => {
    const before = await getJson(service, 'prototypes/17.json');
    service.store.touch(3);
    expect(await getJson(service, 'prototypes/17.json')).toEqual(before);
  });
});

describe('store mutations for tests', () => {
  test('addPage, addLayer, addDiscussion and addDiscussionEntry show up over HTTP', async () => {
    const layerId = service.store.addLayer(3, 'New layer');
    const pageId = service.store.addPage(3, 'New & shiny', [layerId]);
    expect(pageId).toBe('page648229106');
    expect(await getJson(service, 'prototypes/3/pages.json')).toContain(pageId);
    expect(await getJson(service, `prototypes/3/pages/${pageId}.json`)).toEqual({
      id: pageId,
      layers: [layerId],
      name: 'New & shiny',
    });
    const discussionId = service.store.addDiscussion(3, pageId, 'Hello', 'tester');
    service.store.addDiscussionEntry(3, discussionId, 'other', 'reply');
    expect(await getJson(service, `prototypes/3/pages/${pageId}/discussions.json`)).toEqual([discussionId]);
    const discussion = await getJson<{ entries: unknown[] }>(service, `prototypes/3/discussions/${discussionId}.json`);
    expect(discussion.entries).toHaveLength(2);
  });

  test('addPrototype gets a key of its own; deletePrototype removes it from lists', async () => {
    const id = service.store.addPrototype('Fresh');
    const key = service.keys.perPrototype[String(id)]!;
    expect(await getJson(service, 'prototypes.json', key)).toEqual([id]);
    const listBefore = await get(service, 'prototypes.json');
    service.store.deletePrototype(id);
    expect(await getJson(service, 'prototypes.json')).not.toContain(id);
    expect(await getJson(service, 'prototypes.json', key)).toEqual([]);
    expect((await get(service, `prototypes/${id}.json`)).status).toBe(404);
    const conditional = await get(service, 'prototypes.json', undefined, {
      'if-modified-since': listBefore.headers.get('last-modified')!,
    });
    expect(conditional.status).toBe(200);
  });

  test('mutating something that does not exist throws', () => {
    expect(() => service.store.updateElement(3, 'page0001', 'element1', {})).toThrow(RangeError);
    expect(() => service.store.addElement(3, 'page0001', {})).toThrow(TypeError);
    expect(() => service.store.deletePrototype(12345)).toThrow(RangeError);
  });
});

describe('what restore relies on (issue 11)', () => {
  test('stats count requests by method, so a test can prove nothing was written', async () => {
    service.stats.reset();
    await getJson(service, 'prototypes/3/pages/page0001/elements.json');
    await send(service, 'POST', 'prototypes/3/pages/page0001/elements.json', { type: 'text' });
    await send(service, 'DELETE', 'prototypes/3/pages/page0001/elements/element4');
    expect(Object.fromEntries(service.stats.byMethod)).toEqual({ GET: 1, POST: 1, DELETE: 1 });
    expect(writeRequests(service.stats)).toBe(2);
  });

  test.each([
    ['the read-only key', 'readOnly'],
    ['a per-prototype key', 'proto'],
  ])('a write with %s is refused with 403 and changes nothing', async (_what, which) => {
    const key = which === 'readOnly' ? service.keys.readOnly : service.keys.perPrototype['3']!;
    const before = await getJson<Meta>(service, 'prototypes/3.json');
    const html = await (await get(service, 'prototypes/3/pages/page0001.html')).text();
    for (const [method, path] of [
      ['POST', 'prototypes/3/pages/page0001/elements.json'],
      ['PUT', 'prototypes/3/pages/page0001/elements/element3.json'],
      ['DELETE', 'prototypes/3/pages/page0001/elements/element3'],
    ] as const) {
      expect((await send(service, method, path, method === 'DELETE' ? undefined : { type: 'x' }, key)).status).toBe(
        403,
      );
    }
    expect(await getJson(service, 'prototypes/3.json')).toEqual(before);
    expect(await (await get(service, 'prototypes/3/pages/page0001.html')).text()).toBe(html);
  });

  test('the XHTML rendering follows a create: the new element is on the page', async () => {
    const res = await send(service, 'POST', 'prototypes/3/pages/page0001/elements.json', {
      type: 'note',
      text: 'restored',
    });
    const id = /(element\d+)\.json$/.exec(res.headers.get('location')!)![1]!;
    const html = await (await get(service, 'prototypes/3/pages/page0001.html')).text();
    expect(html).toContain(`id="${id}"`);
    expect(html).toContain('restored');
  });
});
