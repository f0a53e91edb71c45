import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fetchResource, type AttemptEvent } from '../../src/crawl/fetch-resource.js';
import { wireCap } from '../../src/client/content-coding.js';
import { isRabbitError } from '../../src/core/errors.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { useFakeService } from '../helpers/fake-service.js';
import { testFetchContext } from './fetch-context.js';

let service: FakeService;
let dir: string;
useFakeService({ seed: 1, dataset: { pngPaddingBytes: 300_000 } }, (fixture) => ({ service, dir } = fixture));

const META = '/rabbit/api/prototypes/3.json';
const PNG = '/rabbit/api/prototypes/3/pages/page0001.png';

/** One fetch of `source` with the cap `maxBytes`; what it returned or threw, and the attempts it reported. */
async function fetchOnce(source: string, maxBytes: number) {
  const events: AttemptEvent[] = [];
  const { ctx, close } = await testFetchContext(service.baseUrl, join(dir, 'spool'), {
    onAttempt: (event) => events.push(event),
  });
  try {
    const result = await fetchResource(ctx, { source, key: service.keys.readOnly, maxBytes, keep: false }).catch(
      (error: unknown) => error,
    );
    return { result, events };
  } finally {
    await close();
  }
}

async function plainBody(source: string): Promise<Buffer> {
  service.setCompression(undefined);
  const response = await fetch(`${service.baseUrl}${source}?api_key=${service.keys.readOnly}`);
  return Buffer.from(await response.arrayBuffer());
}

describe('fetchResource and Content-Encoding', () => {
  it('reports the decoded size as bytes and the encoded one as wire bytes', async () => {
    service.setCompression({ when: 'asked', codings: ['gzip'] });
    const { result, events } = await fetchOnce(META, 1 << 20);
    const plain = await plainBody(META);
    expect(result).toMatchObject({ status: 200, body: { size: plain.length } });
    const [response] = events;
    expect(response).toMatchObject({ type: 'response', bytes: plain.length });
    expect((response as { wireBytes: number }).wireBytes).toBeLessThan(plain.length);
  });

  it('does not retry an answer in a coding it cannot undo', async () => {
    service.setFaults({ paths: [{ path: META, kind: 'unknown-coding' }] });
    const { result } = await fetchOnce(META, 1 << 20);
    expect(isRabbitError(result, 'UNKNOWN_CODING')).toBe(true);
    expect((result as { attempts: number }).attempts).toBe(1);
    expect(service.stats.byPath.get(META)).toBe(1);
  });

  it('takes an encoded body that decodes to exactly the cap', async () => {
    const plain = await plainBody(PNG);
    service.setCompression({ when: 'always', codings: ['gzip'] });
    const { result } = await fetchOnce(PNG, plain.length);
    expect(result).toMatchObject({ status: 200, body: { size: plain.length } });
  });

  it('refuses at the headers an encoded body whose Content-Length no body within the cap could have', async () => {
    const plain = await plainBody(PNG);
    service.setCompression({ when: 'always', codings: ['gzip'] });
    const cap = 100_000;
    expect(wireCap(cap)).toBeLessThan(plain.length);
    service.stats.reset();
    const { result } = await fetchOnce(PNG, cap);
    expect(isRabbitError(result, 'BODY_TOO_LARGE')).toBe(true);
    expect((result as Error).message).toMatch(/body of \d+ bytes exceeds the cap of 100000/);
    expect(service.stats.byPath.get(PNG)).toBe(1);
  });

  it('stops a body that decodes beyond the cap, naming the decoded size', async () => {
    const plain = await plainBody(PNG);
    service.setCompression({ when: 'always', codings: ['br'] });
    const cap = plain.length - 1000;
    const { result } = await fetchOnce(PNG, cap);
    expect(isRabbitError(result, 'BODY_TOO_LARGE')).toBe(true);
    expect((result as Error).message).toContain(`decoded body exceeds the cap of ${cap} bytes`);
  });
});
