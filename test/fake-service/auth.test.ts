import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { get, getJson, send } from './helpers.js';

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService();
});
afterAll(() => service.close());

type KeyName = 'readWrite' | 'readOnly' | 'proto3' | 'proto17' | 'invalid' | 'none' | 'empty';

function keyOf(name: KeyName): string | null {
  switch (name) {
    case 'proto3':
      return service.keys.perPrototype['3']!;
    case 'proto17':
      return service.keys.perPrototype['17']!;
    case 'none':
      return null;
    case 'empty':
      return '';
    default:
      return service.keys[name];
  }
}

describe('keys', () => {
  test('all keys are 40 characters and distinct; there is one per prototype', () => {
    const all = [
      service.keys.readWrite,
      service.keys.readOnly,
      service.keys.invalid,
      ...Object.values(service.keys.perPrototype),
    ];
    for (const key of all) expect(key).toMatch(/^[0-9a-f]{40}$/);
    expect(new Set(all).size).toBe(all.length);
    expect(Object.keys(service.keys.perPrototype)).toEqual(['3', '17', '42', '1001', '1002']);
  });

  test.each<[KeyName, number[]]>([
    ['readWrite', [3, 17, 42, 1001, 1002]],
    ['readOnly', [3, 17, 42, 1001, 1002]],
    ['proto3', [3]],
    ['proto17', [17]],
  ])('%s lists %j', async (name, ids) => {
    expect(await getJson(service, 'prototypes.json', keyOf(name))).toEqual(ids);
  });
});

describe('reads', () => {
  test.each<[KeyName, string]>([
    ['readOnly', 'prototypes/3/pages/page0001.png'],
    ['proto3', 'prototypes/3.json'],
    ['proto3', 'prototypes/3/pages/page0001/elements/element3.json'],
    ['proto17', 'prototypes/17/layers/layer5/elements.json'],
  ])('%s GET %s -> 200', async (name, path) => {
    expect((await get(service, path, keyOf(name))).status).toBe(200);
  });

  // A refusal says why, in JSON.
  test.each<[KeyName, string, number]>([
    ['none', 'prototypes.json', 401],
    ['empty', 'prototypes.json', 401],
    ['invalid', 'prototypes.json', 401],
    ['invalid', 'prototypes/3.json', 401],
    ['none', 'no/such/path.json', 401],
    ['proto3', 'prototypes/17.json', 403],
    ['proto3', 'prototypes/17/pages.json', 403],
    ['proto3', 'prototypes/17/pages/page1.html', 403],
    ['proto3', 'prototypes/17/discussions/4.json', 403],
    // A key limited to one prototype learns nothing about others, existing or not.
    ['proto3', 'prototypes/999.json', 403],
  ])('%s GET %s -> %i', async (name, path, status) => {
    const res = await get(service, path, keyOf(name));
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toMatchObject({ error: expect.any(String), message: expect.any(String) });
  });
});

describe('writes', () => {
  const element = 'prototypes/3/pages/page0001/elements/element3.json';
  test.each<[KeyName, string, string, number]>([
    ['readOnly', 'POST', 'prototypes/3/pages/page0001/elements.json', 403],
    ['readOnly', 'PUT', element, 403],
    ['readOnly', 'DELETE', element, 403],
    ['proto3', 'PUT', element, 403],
    ['proto3', 'DELETE', 'prototypes/3/pages/page0001/elements/element3', 403],
    ['invalid', 'DELETE', element, 401],
  ])('%s %s %s -> %i and nothing changes', async (name, method, path, status) => {
    const before = await getJson(service, 'prototypes/3.json');
    const res = await send(service, method, path, { type: 'button' }, keyOf(name) ?? '');
    expect(res.status).toBe(status);
    expect(await getJson(service, 'prototypes/3.json')).toEqual(before);
    expect(service.store.element(3, 'page0001', 'element3')).toBeDefined();
  });
});
