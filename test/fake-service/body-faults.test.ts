import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { parseFaultSpec, startFakeService } from '../../src/fake-service/index.js';
import { get } from './helpers.js';

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService();
});
afterEach(() => {
  service.setFaults(undefined);
  service.stats.reset();
});
afterAll(() => service.close());

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

async function body(path: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const res = await get(service, path);
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('bom and empty-body faults', () => {
  test.each(['prototypes.json', 'prototypes/3.json', 'prototypes/3/pages/page0001/elements.json'])(
    'bom puts a UTF-8 byte-order mark before the JSON of %s, and nothing else changes',
    async (path) => {
      const plain = await body(path);
      service.setFaults(parseFaultSpec('rate=1,kinds=bom'));
      const marked = await body(path);
      expect(marked.status).toBe(200);
      expect(marked.type).toBe(plain.type);
      expect(marked.bytes).toEqual(Buffer.concat([BOM, plain.bytes]));
      expect(service.stats.faultsInjected).toBe(1);
    },
  );

  test('bom leaves a PNG alone and does not count it', async () => {
    const plain = await body('prototypes/3/pages/page0001.png');
    service.setFaults(parseFaultSpec('rate=1,kinds=bom'));
    expect((await body('prototypes/3/pages/page0001.png')).bytes).toEqual(plain.bytes);
    expect(service.stats.faultsInjected).toBe(0);
  });

  test.each([
    ['prototypes/3.json', 'application/json; charset=utf-8'],
    ['prototypes/3/pages/page0001.png', 'image/png'],
  ])(
    'empty-body answers %s with 200, its type, Content-Length 0 and no byte, the first n times',
    async (path, type) => {
      service.setFaults(parseFaultSpec(`path=/rabbit/api/${path}:empty-body*2`));
      for (let i = 0; i < 2; i++) {
        const res = await get(service, path);
        expect([res.status, res.headers.get('content-type'), res.headers.get('content-length')]).toEqual([
          200,
          type,
          '0',
        ]);
        expect((await res.arrayBuffer()).byteLength).toBe(0);
      }
      expect((await body(path)).bytes.length).toBeGreaterThan(0);
      expect(service.stats.faultsInjected).toBe(2);
    },
  );

  test('empty-body leaves an error answer as it is', async () => {
    service.setFaults(parseFaultSpec('path=/rabbit/api/prototypes/999.json:empty-body'));
    expect((await body('prototypes/999.json')).status).toBe(404);
    expect(service.stats.faultsInjected).toBe(0);
  });
});
