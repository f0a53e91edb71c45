import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import { writeRequests, type FakeService } from '../../src/fake-service/index.js';
import { restorePrototype, type RestoreEvent, type RestoreOptions } from '../../src/restore/restore-prototype.js';
import { startCli } from '../helpers/cli.js';
import {
  PROTO,
  archivedElements,
  contents,
  damage,
  exportPrototype,
  liveContents,
  restoreOptions,
} from './restore-helpers.js';
import { useFakeService } from '../helpers/fake-service.js';
import { skippingClock } from '../helpers/skipping-clock.js';
import { until, whenever } from '../helpers/until.js';

let service: FakeService;
let dir: string;
let archive: string;

/** How the service waits out its latency: real time, unless a test holds only the answers it picks. */
let latencySleep: (ms: number) => Promise<void>;
useFakeService({ seed: 1, sleep: (ms) => latencySleep(ms) }, (fixture) => ({ service, dir } = fixture));
beforeEach(async () => {
  latencySleep = (ms) => sleep(ms);
  archive = await exportPrototype(service, dir, 'night.zip');
});

const PAGE_LIST = `/rabbit/api/prototypes/${PROTO}/pages/page0001/elements.json`;

function options(extra: Partial<RestoreOptions> = {}): RestoreOptions {
  return restoreOptions(service, archive, extra);
}

/** Archived contents with the stray removed: what the live prototype must hold after a restore. */
async function expectRestored(): Promise<void> {
  expect(liveContents(service)).toEqual(contents(await archivedElements(archive)));
}

describe('writes whose answers go missing', () => {
  it('a POST answered 500 (not applied) is sent again only after a listing shows it missing', async () => {
    damage(service);
    const events: RestoreEvent[] = [];
    const report = await restorePrototype(
      options({
        onEvent: (event) => {
          events.push(event);
          // Once planned, the next request to the page's list (the first POST) fails.
          if (event.type === 'plan') service.setFaults({ paths: [{ path: PAGE_LIST, kind: '500', times: 1 }] });
        },
      }),
    );
    expect(report.fatal).toBeUndefined();
    expect(report.done).toEqual({ create: 4, update: 2, delete: 1 });
    // 4 creates, one of them sent twice; between the two a GET of the list looked for it.
    expect(service.stats.byMethod.get('POST')).toBe(5);
    await expectRestored();
  });

  it('a POST applied whose answer timed out is found by listing, not sent again', async () => {
    damage(service);
    let stop = (): void => undefined;
    const report = await restorePrototype(
      options({
        timeoutMs: 300,
        onEvent: (event) => {
          if (event.type !== 'plan') return;
          // The first POST is applied at once but answered after the client gave up on it.
          service.setLatency(1000);
          stop = whenever(
            () => (service.stats.byMethod.get('POST') ?? 0) >= 1,
            () => service.setLatency(0),
            { intervalMs: 1 },
          );
        },
      }),
    );
    stop();
    expect(report.fatal).toBeUndefined();
    expect(report.done).toEqual({ create: 4, update: 2, delete: 1 });
    expect(service.stats.byMethod.get('POST')).toBe(4);
    expect(Object.keys(report.idMap)).toHaveLength(4);
    await expectRestored();
  });

  it('PUT and DELETE are repeated after 503 and 429', async () => {
    const stray = damage(service);
    const moved = service.store.page(PROTO, 'page0001')!.elements[0]!.id;
    const base = `/rabbit/api/prototypes/${PROTO}/pages/page0001/elements`;
    const report = await restorePrototype(
      options({
        // The second each fault asks to wait (Retry-After) passes on a clock that skips it.
        sleep: skippingClock().sleep,
        onEvent: (event) => {
          if (event.type !== 'plan') return;
          service.setFaults({
            paths: [
              { path: `${base}/${moved}.json`, kind: '503', times: 2 },
              { path: `${base}/${stray}`, kind: '429', times: 1 },
            ],
          });
        },
      }),
    );
    expect(report.done).toEqual({ create: 4, update: 2, delete: 1 });
    expect(service.stats.byMethod.get('PUT')).toBe(4);
    expect(service.stats.byMethod.get('DELETE')).toBe(2);
    await expectRestored();
  });

  it('journals each write before and after', async () => {
    damage(service);
    const journal = join(dir, 'j.jsonl');
    await restorePrototype(options({ journal }));
    const records = (await readFile(journal, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { t: string; op?: string; id?: string });
    expect(records[0]).toMatchObject({ t: 'start', baseUrl: service.baseUrl, prototype: PROTO });
    const writes = records.slice(1);
    expect(writes).toHaveLength(14);
    for (let i = 0; i < writes.length; i += 2) {
      expect(writes[i]!.t).toBe('begin');
      expect(writes[i + 1]).toMatchObject({ t: 'done', op: writes[i]!.op });
    }
    expect(JSON.stringify(records)).not.toContain(service.keys.readWrite);
  });
});

describe('kill -9 in the middle of a restore', () => {
  it('the same command again ends with every element once', async () => {
    damage(service);
    // Every answer is due a second after its request, but only those from the second POST on are
    // held for it (the creates are sent one at a time): the reads and the first POST are answered
    // at once, and the second POST is applied on arrival and its answer still pending when the
    // kill lands, however slow the machine.
    const posts = (): number => service.stats.byMethod.get('POST') ?? 0;
    latencySleep = (ms) => (posts() >= 2 ? sleep(ms) : Promise.resolve());
    service.setLatency(1000);
    const env = { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl };
    const { child, done } = startCli(['restore', archive, '--prototype', PROTO, '--prune', '--json'], { env });
    await until(() => posts() >= 2, { what: 'the second POST', intervalMs: 1 });
    child.kill('SIGKILL');
    const killed = await done;
    expect(killed.signal).toBe('SIGKILL');
    expect(killed.stdout).toBe('');
    expect(writeRequests(service.stats)).toBe(2);

    service.setLatency(0);
    const again = await startCli(['restore', archive, '--prototype', PROTO, '--prune', '--json'], { env }).done;
    expect(again.code).toBe(0);
    const summary = JSON.parse(again.stdout) as { create: number; idMap: Record<string, string> };
    // Two of the four were created before the kill, the second one's answer lost: found, not repeated.
    expect(summary.create).toBe(2);
    expect(Object.keys(summary.idMap)).toHaveLength(4);
    expect(service.stats.byMethod.get('POST')).toBe(4);
    expect(again.stderr).toMatch(/earlier run stopped with 1 write/);
    await expectRestored();
  });
});
