import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { backupAccount } from '../../src/backup/backup-account.js';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { metricsText } from '../../src/monitor/metrics.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { startPingListener, type PingListener } from '../helpers/ping-listener.js';

// issue 38: backup --check-sample compares each night's archive with the service once it is written.

let service: FakeService;
let dir: string;
useFakeService({ seed: 5 }, (fixture) => ({ service, dir } = fixture));

let monitor: PingListener;
let base: string;
beforeEach(async () => {
  monitor = await startPingListener();
  base = `${monitor.base}/ping/5f3c`;
});
afterEach(() => monitor.close());

const ELEMENT = (store: FakeService['store']): { page: string; element: string } => {
  const page = store.prototype('1001')?.pages[0];
  const element = page?.elements[0]?.id;
  if (!page || !element) throw new Error('prototype 1001 has no element on its first page');
  return { page: page.id, element };
};

describe('backup --check-sample', () => {
  it('puts the check into the JSON summary, the metrics file (rabbit_export_drift_resources) and the healthcheck ping', async () => {
    const metrics = join(dir, 'rabbit.prom');
    const run = await runCli(
      [
        'backup',
        '--dir',
        dir,
        '--check-sample',
        '100%',
        '--json',
        '--metrics-file',
        metrics,
        '--healthcheck-url',
        base,
      ],
      { register: registerBackup, env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl } },
    );
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout.trim()) as Record<string, unknown>;
    expect(summary).toMatchObject({
      type: 'summary',
      ok: true,
      exitCode: 0,
      check: { sample: '100%', verdict: 'match', differences: 0, failed: false, share: 1 },
    });
    expect(typeof (summary['check'] as Record<string, unknown>)['seed']).toBe('number');
    expect(await readFile(metrics, 'utf8')).toContain(`rabbit_export_drift_resources{dir="${dir}"} 0\n`);
    expect(JSON.parse(monitor.pings.map((ping) => ping.body).at(-1) ?? '')).toMatchObject({
      check: { differences: 0 },
    });
    expect(run.stdout + run.stderr + monitor.pings.map((ping) => ping.body).join('')).not.toContain(
      service.keys.readOnly,
    );
  }, 60_000);

  it('a bad --check-sample is a usage error before anything is fetched', async () => {
    const run = await runCli(['backup', '--dir', dir, '--check-sample', '0%'], {
      register: registerBackup,
      env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--check-sample takes a share (e.g. 5%, up to 100%) or a number of resources');
    expect(service.stats.requests).toBe(0);
  });

  it('edits made while the night ran are drift: reported, the night still succeeds', async () => {
    const { page, element } = ELEMENT(service.store);
    const result = await backupAccount({
      dir,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      checkSample: { percent: 100 },
      onEvent: (event) => {
        // Someone edits once the archive is written, before the check reads the service.
        if (event.type === 'phase' && event.phase === 'done')
          service.store.updateElement('1001', page, element, { position: { x: 9, y: 9 } });
      },
    });
    expect(result.export.complete).toBe(true);
    expect(result.check).toMatchObject({ verdict: 'drift', failed: false, unexplained: 0 });
    expect(result.check?.changed).toBeGreaterThanOrEqual(2);
    expect(result.retention.find((d) => result.out.endsWith(d.name))?.keep).toBe(true);
  }, 60_000);

  it('a body that differs while its revision has not moved fails the night: the archive does not hold what was fetched', async () => {
    const { page, element } = ELEMENT(service.store);
    const source = `/rabbit/api/prototypes/1001/pages/${page}/elements/${element}.json`;
    const night = (day: number) => ({
      dir,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      keep: 1,
      now: () => Date.parse(`2026-03-0${day}T03:15:00Z`),
    });
    const first = await backupAccount(night(1));
    const result = await backupAccount({
      ...night(2),
      checkSample: { percent: 100 },
      onEvent: (event) => {
        if (event.type === 'phase' && event.phase === 'done')
          service.setFaults({ paths: [{ path: source, kind: 'malformed-json' }] });
      },
    });
    expect(result.export.complete).toBe(true);
    expect(result.check).toMatchObject({ verdict: 'drift', failed: true, unexplained: 1, changed: 1 });
    // With --keep 1 a good night would have replaced the first; this one does not count as good.
    expect(result.pruned).toEqual([]);
    expect(result.kept.map((name) => join(dir, name))).toContain(first.out);
    const summary = { complete: true, check: result.check };
    expect(
      metricsText({ startedMs: 0, endedMs: 1000, exitCode: 3, summary }, { name: 'dir', value: dir }, null),
    ).toContain(`rabbit_export_drift_resources{dir="${dir}"} 1\n`);
  }, 60_000);
});
