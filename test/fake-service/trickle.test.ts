import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { parseFaultSpec, startFakeService, type FakeService } from '../../src/fake-service/index.js';

let service: FakeService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

describe('the trickle fault', () => {
  it('is selectable in serve --faults, per path and with its pace', () => {
    expect(parseFaultSpec('path=/rabbit/api/prototypes/3.json:trickle,trickle-ms=250')).toEqual({
      paths: [{ path: '/rabbit/api/prototypes/3.json', kind: 'trickle' }],
      trickleMs: 250,
    });
    expect(parseFaultSpec('rate=1,kinds=trickle')).toEqual({ rate: 1, kinds: ['trickle'] });
  });

  it('answers 200 at once, then sends the body one byte at a time without ever ending it', async () => {
    const path = '/rabbit/api/prototypes/3.json';
    service = await startFakeService({ faults: { paths: [{ path, kind: 'trickle' }], trickleMs: 20 } });
    const url = `${service.baseUrl}${path}?api_key=${service.keys.readOnly}`;
    const seen = await new Promise<{ status: number; chunks: number[]; ended: boolean; chunked: boolean }>(
      (resolve, reject) => {
        const req = request(url, (res) => {
          const chunks: number[] = [];
          let ended = false;
          res.on('end', () => (ended = true));
          res.on('error', () => undefined);
          // A good number of single bytes, then hang up.
          res.on('data', (chunk: Buffer) => {
            if (chunks.push(chunk.length) !== 10) return;
            resolve({
              status: res.statusCode ?? 0,
              chunks: [...chunks],
              ended,
              chunked: res.headers['transfer-encoding'] === 'chunked',
            });
            req.destroy();
          });
        });
        req.on('error', reject);
        req.end();
      },
    );
    expect(seen.status).toBe(200);
    expect(seen.chunked).toBe(true);
    expect(seen.ended).toBe(false);
    expect(seen.chunks.every((length) => length === 1)).toBe(true);
  });
});
