import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { isRabbitError } from '../../src/core/errors.js';
import type { FakeService, FaultKind, FaultOptions } from '../../src/fake-service/index.js';
import { parseFaultSpec, STATIC_PATHS, startFakeService } from '../../src/fake-service/index.js';
import { until } from '../helpers/until.js';
import { apiUrl, get } from './helpers.js';

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService();
});
afterEach(() => {
  service.setFaults(undefined);
  service.stats.reset();
});
afterAll(() => service.close());

const META = '/rabbit/api/prototypes/3.json';
const PNG = '/rabbit/api/prototypes/3/pages/page0001.png';

function fault(path: string, kind: FaultKind, times?: number): FaultOptions {
  return { paths: [times === undefined ? { path, kind } : { path, kind, times }] };
}

function url(path: string, via: FakeService = service): string {
  return `${via.baseUrl}${path}?api_key=${via.keys.readWrite}`;
}

interface RawResult {
  status: number;
  headers: IncomingHttpHeaders;
  received: number;
  chunks: number;
  error?: Error;
}

interface RawOptions {
  stopAfter?: number;
  via?: FakeService;
  /** Called with the bytes received so far after every chunk. */
  onData?: (received: number) => void;
}

/** Reads with node:http so a cut body is measured instead of hidden behind a fetch error. */
function raw(path: string, { stopAfter = Number.POSITIVE_INFINITY, via, onData }: RawOptions = {}): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const req = request(url(path, via), { agent: false }, (res) => {
      const result: RawResult = { status: res.statusCode ?? 0, headers: res.headers, received: 0, chunks: 0 };
      const finish = (error?: Error): void => {
        if (error) result.error = error;
        resolve(result);
      };
      res.on('data', (chunk: Buffer) => {
        result.received += chunk.length;
        result.chunks++;
        onData?.(result.received);
        if (result.received >= stopAfter) {
          req.destroy();
          finish();
        }
      });
      res.on('end', () => finish());
      res.on('error', (error) => finish(error));
      res.on('aborted', () => finish(new Error('aborted')));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('status faults', () => {
  test.each<[FaultKind, number]>([
    ['500', 500],
    ['502', 502],
    ['503', 503],
    ['504', 504],
    ['403', 403],
    ['404', 404],
    ['429', 429],
  ])('%s answers %i with a JSON error body', async (kind, status) => {
    service.setFaults(fault(META, kind));
    const res = await fetch(url(META));
    expect(res.status).toBe(status);
    expect(await res.json()).toMatchObject({ error: expect.any(String) });
    expect(service.stats.faultsInjected).toBe(1);
  });

  test('429 and 503 carry a short Retry-After, in seconds or as an HTTP date', async () => {
    service.setFaults(fault(META, '429'));
    const values: string[] = [];
    for (let i = 0; i < 2; i++) values.push((await fetch(url(META))).headers.get('retry-after')!);
    expect(values[0]).toBe('1');
    expect(Date.parse(values[1]!)).not.toBeNaN();
    service.setFaults(fault(META, '503'));
    expect((await fetch(url(META))).headers.get('retry-after')).toBe('1');
  });

  test('the HTTP-date Retry-After is one second after the service clock', async () => {
    const at = Date.UTC(2026, 0, 2, 3, 4, 5);
    const clocked = await startFakeService({ now: () => at, faults: fault(META, '429') });
    try {
      const values: string[] = [];
      for (let i = 0; i < 2; i++) values.push((await fetch(url(META, clocked))).headers.get('retry-after')!);
      expect(values).toEqual(['1', 'Fri, 02 Jan 2026 03:04:06 GMT']);
    } finally {
      await clocked.close();
    }
  });

  test('path faults with times fail only the first n requests', async () => {
    service.setFaults(fault(META, '503', 2));
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetch(url(META))).status);
    expect(statuses).toEqual([503, 503, 200, 200]);
    expect(service.stats.faultsInjected).toBe(2);
  });
});

describe('connection faults', () => {
  test('reset drops the connection before any response; the next request is fine', async () => {
    service.setFaults(fault(META, 'reset', 1));
    await expect(fetch(url(META))).rejects.toThrow('fetch failed');
    expect((await fetch(url(META))).status).toBe(200);
    expect(service.stats.faultsInjected).toBe(1);
  });

  test.each([META, PNG])('truncate announces the full length of %s and sends half', async (path) => {
    const full = await raw(path);
    service.setFaults(fault(path, 'truncate'));
    const cut = await raw(path);
    expect(cut.status).toBe(200);
    expect(cut.headers['content-length']).toBe(String(full.received));
    expect(cut.received).toBe(Math.floor(full.received / 2));
    expect(cut.error).toBeDefined();
  });

  test('slow-body delivers the whole body in pieces, pausing slowBodyMs in all', async () => {
    const full = await raw(PNG);
    const piece = Math.ceil(full.received / 10);
    // Each pause ends once the client has every byte sent before it, so every piece arrives on
    // its own, however busy the machine, and no timer is involved.
    const asked: number[] = [];
    let received = 0;
    let waiting: { until: number; resume: () => void } | undefined;
    const sleep = (ms: number): Promise<void> => {
      asked.push(ms);
      return new Promise<void>((resume) => {
        waiting = { until: asked.length * piece, resume };
        if (received >= waiting.until) resume();
      });
    };
    const slowService = await startFakeService({ sleep, faults: { ...fault(PNG, 'slow-body'), slowBodyMs: 600 } });
    try {
      const onData = (bytes: number): void => {
        received = bytes;
        if (waiting !== undefined && received >= waiting.until) waiting.resume();
      };
      const slow = await raw(PNG, { via: slowService, onData });
      expect(slow.error).toBeUndefined();
      expect(slow.received).toBe(full.received);
      expect(slow.chunks).toBeGreaterThanOrEqual(10);
      // Nine pauses between ten pieces, a tenth of slowBodyMs each.
      expect(asked).toEqual(Array.from({ length: 9 }, () => 60));
    } finally {
      await slowService.close();
    }
  });

  test.each([
    [PNG, String(4 * 1024 ** 3), undefined],
    [META, undefined, 'chunked'],
  ])(
    'endless-body on %s streams until the client leaves, and the server stays healthy',
    async (path, length, encoding) => {
      service.setFaults(fault(path, 'endless-body', 1));
      const endless = await raw(path, { stopAfter: 1024 * 1024 });
      expect(endless.status).toBe(200);
      expect(endless.received).toBeGreaterThanOrEqual(1024 * 1024);
      expect(endless.headers['content-length']).toBe(length);
      expect(endless.headers['transfer-encoding']).toBe(encoding);
      expect((await fetch(url(META))).status).toBe(200);
      await until(() => service.stats.inFlight === 0, { what: 'no request in flight' });
    },
  );

  test('close() ends a service that is still streaming an endless body', async () => {
    const other = await startFakeService({ faults: fault(PNG, 'endless-body') });
    const res = await fetch(`${other.baseUrl}${PNG}?api_key=${other.keys.readOnly}`);
    const reader = res.body!.getReader();
    await reader.read();
    await other.close();
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) break;
      })(),
    ).rejects.toThrow('terminated');
  });
});

describe('content faults', () => {
  test.each([META, '/rabbit/api/prototypes/3/pages.json', PNG])(
    'malformed-json on %s: 200 JSON that does not parse',
    async (path) => {
      service.setFaults(fault(path, 'malformed-json'));
      const res = await fetch(url(path));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const text = await res.text();
      expect(() => JSON.parse(text)).toThrow(SyntaxError);
    },
  );

  test.each([
    ['/rabbit/api/prototypes/3/pages.json', ['page0001', 'page7830', 'page648229105']],
    ['/rabbit/api/prototypes/3/pages/page0001/elements.json', ['element3', 'element4', 'element5']],
    ['/rabbit/api/prototypes/3/discussions.json', [1, 2, 3]],
    ['/rabbit/api/prototypes.json', [3, 17, 42, 1001, 1002]],
  ])('bad-ids on %s mixes hostile ids among the real ones', async (path, real) => {
    service.setFaults(fault(path, 'bad-ids'));
    const list = (await (await fetch(url(path))).json()) as unknown[];
    for (const id of real) expect(list).toContain(id);
    expect(list.length).toBeGreaterThan(real.length + 2);
    const hostile = list.filter((id) => !real.includes(id as never));
    expect(hostile.some((id) => typeof id === 'string' && id.includes('..'))).toBe(true);
    expect(hostile.some((id) => typeof id !== typeof real[0])).toBe(true);
  });

  test('bad-ids reaches the legacy pages object and page layers', async () => {
    service.setFaults({
      paths: [
        { path: '/rabbit/api/prototypes/42/pages.json', kind: 'bad-ids' },
        { path: '/rabbit/api/prototypes/3/pages/page0001.json', kind: 'bad-ids' },
      ],
    });
    const pages = (await (await get(service, 'prototypes/42/pages.json')).json()) as Record<string, unknown>;
    expect(Object.keys(pages)).toContain('page2200');
    expect(Object.keys(pages)).toContain('../../x');
    const page = (await (await get(service, 'prototypes/3/pages/page0001.json')).json()) as { layers: unknown[] };
    expect(page.layers).toContain('layer1');
    expect(page.layers).toContain('page1/../../../etc');
  });

  test('bad-ids has nothing to poison in a PNG: served as is and not counted', async () => {
    service.setFaults(fault(PNG, 'bad-ids'));
    const res = await fetch(url(PNG));
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(service.stats.faultsInjected).toBe(0);
  });
});

describe('rate faults', () => {
  async function statuses(options: FaultOptions, count: number): Promise<string[]> {
    const other = await startFakeService({ faults: options });
    const out: string[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const res = await fetch(apiUrl(other, 'prototypes/3.json')).catch(() => undefined);
        if (res === undefined) out.push('reset');
        else
          out.push(
            await res.arrayBuffer().then(
              () => String(res.status),
              () => 'truncate',
            ),
          );
      }
      expect(other.stats.faultsInjected).toBe(out.filter((s) => s !== '200').length);
    } finally {
      await other.close();
    }
    return out;
  }

  test('hit about the given fraction, drawn from the transient kinds, the same way for the same seed', async () => {
    const a = await statuses({ rate: 0.3, seed: 7 }, 100);
    const b = await statuses({ rate: 0.3, seed: 7 }, 100);
    const c = await statuses({ rate: 0.3, seed: 8 }, 100);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    const failed = a.filter((s) => s !== '200');
    expect(failed.length).toBeGreaterThan(15);
    expect(failed.length).toBeLessThan(45);
    for (const s of failed) expect(['429', '500', '502', '503', '504', 'reset', 'truncate']).toContain(s);
    expect(new Set(failed).size).toBeGreaterThanOrEqual(5);
  });

  test('only the listed kinds, and never on static assets', async () => {
    service.setFaults({ rate: 1, kinds: ['502'] });
    expect((await get(service, 'prototypes.json')).status).toBe(502);
    expect((await fetch(`${service.baseUrl}${STATIC_PATHS.css}`)).status).toBe(200);
  });

  test('path faults reach static assets', async () => {
    service.setFaults(fault(STATIC_PATHS.logo, '404'));
    expect((await fetch(`${service.baseUrl}${STATIC_PATHS.logo}`)).status).toBe(404);
  });
});

describe('parseFaultSpec', () => {
  test.each<[string, FaultOptions]>([
    [
      'rate=0.15,seed=7,kinds=429+503+reset+truncate',
      { rate: 0.15, seed: 7, kinds: ['429', '503', 'reset', 'truncate'] },
    ],
    [
      'path=/rabbit/api/prototypes/1/pages/page0001.png:500',
      { paths: [{ path: '/rabbit/api/prototypes/1/pages/page0001.png', kind: '500' }] },
    ],
    [
      'path=/rabbit/api/prototypes.json:reset*2; path=/rabbit/api/prototypes/3.json:endless-body',
      {
        paths: [
          { path: '/rabbit/api/prototypes.json', kind: 'reset', times: 2 },
          { path: '/rabbit/api/prototypes/3.json', kind: 'endless-body' },
        ],
      },
    ],
    ['slow-body-ms=250', { slowBodyMs: 250 }],
    ['', {}],
  ])('%j', (spec, expected) => {
    expect(parseFaultSpec(spec)).toEqual(expected);
  });

  test.each([
    'rate=2',
    'rate=',
    'kinds=418',
    'path=/x.json',
    'path=x.json:500',
    'path=/x.json:500*two',
    'speed=9',
    'seed=-1',
  ])('%j is a USAGE error', (spec) => {
    let error: unknown;
    try {
      parseFaultSpec(spec);
    } catch (caught) {
      error = caught;
    }
    expect(isRabbitError(error, 'USAGE')).toBe(true);
  });
});
