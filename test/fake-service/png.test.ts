import { deflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { get, getJson } from './helpers.js';
import { readPng } from './png-reader.js';

async function png(service: FakeService, path: string): Promise<Buffer> {
  const res = await get(service, path);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/png');
  const body = Buffer.from(await res.arrayBuffer());
  expect(Number(res.headers.get('content-length'))).toBe(body.length);
  return body;
}

describe('page PNG', () => {
  let service: FakeService;
  beforeAll(async () => {
    service = await startFakeService();
  });
  afterAll(() => service.close());

  test.each(['page0001', 'page7830', 'page648229105'])('%s is a valid 320x240 RGB PNG', async (pageId) => {
    const image = readPng(await png(service, `prototypes/3/pages/${pageId}.png`));
    expect([image.width, image.height, image.bitDepth, image.colorType]).toEqual([320, 240, 8, 2]);
    expect(image.chunks.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
  });

  test('the empty page is all white; a page with elements draws them where they are', async () => {
    const empty = readPng(await png(service, 'prototypes/3/pages/page648229105.png'));
    for (const [x, y] of [
      [0, 0],
      [160, 120],
      [319, 239],
    ] as const)
      expect(empty.pixel(x, y)).toEqual([255, 255, 255]);
    const element = await getJson<{
      position: { x: number; y: number };
      dimensions: { width: number; height: number };
    }>(service, 'prototypes/3/pages/page0001/elements/element3.json');
    const image = readPng(await png(service, 'prototypes/3/pages/page0001.png'));
    // The border pixel is dark; the fill is a light colour, neither is white.
    expect(image.pixel(element.position.x, element.position.y)).toEqual([51, 51, 51]);
    expect(image.pixel(element.position.x + 2, element.position.y + 2)).not.toEqual([255, 255, 255]);
  });

  test('the same page renders the same bytes every time', async () => {
    const a = await png(service, 'prototypes/3/pages/page0001.png');
    const b = await png(service, 'prototypes/3/pages/page0001.png');
    expect(a.equals(b)).toBe(true);
  });
});

describe('padding', () => {
  let service: FakeService;
  const padding = 3 * 1024 * 1024 + 17;
  beforeAll(async () => {
    service = await startFakeService({ dataset: { pngPaddingBytes: padding } });
  });
  afterAll(() => service.close());

  test('adds exactly the padding in ancillary chunks that keep the PNG valid', async () => {
    const body = await png(service, 'prototypes/3/pages/page0001.png');
    const image = readPng(body);
    expect(image.width).toBe(320);
    const padded = image.chunks.filter((c) => c.type === 'raBt');
    expect(padded.reduce((sum, c) => sum + c.length, 0)).toBe(padding);
    // Ancillary (lowercase first letter): decoders skip it.
    expect(padded[0]!.type[0]).toBe('r');
    expect(body.length).toBeGreaterThan(padding);
  });

  test('the padding does not compress and differs between pages, yet is stable per page', async () => {
    const a = await png(service, 'prototypes/3/pages/page0001.png');
    const b = await png(service, 'prototypes/3/pages/page7830.png');
    const again = await png(service, 'prototypes/3/pages/page0001.png');
    expect(a.equals(again)).toBe(true);
    const noiseA = a.subarray(a.length - 1024 * 1024 - 100, a.length - 100);
    const noiseB = b.subarray(b.length - 1024 * 1024 - 100, b.length - 100);
    expect(noiseA.equals(noiseB)).toBe(false);
    expect(deflateRawSync(noiseA).length).toBeGreaterThan(noiseA.length * 0.99);
  });

  test('JSON and XHTML are not padded', async () => {
    const res = await get(service, 'prototypes/3/pages/page0001.json');
    expect(Number(res.headers.get('content-length'))).toBeLessThan(200);
  });
});
