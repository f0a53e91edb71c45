import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { BACKUP_LOCK } from '../../src/backup/backup-account.js';
import { acquireLock } from '../../src/storage/lock.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';

let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * The file as Prometheus' own Python client reads it (python3-prometheus-client). A missing
 * module makes python exit non-zero, and the test fails rather than skipping.
 */
function parseWithPrometheusClient(text: string): {
  families: Record<string, { type: string; help: string }>;
  samples: Sample[];
} {
  const script = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
families, samples = {}, []
for family in text_string_to_metric_families(sys.stdin.read()):
    families[family.name] = {"type": family.type, "help": family.documentation}
    for s in family.samples:
        samples.append({"name": s.name, "labels": s.labels, "value": s.value})
print(json.dumps({"families": families, "samples": samples}))
`;
  // Debian's interpreter, which the Debian package installs into (a pyenv python3 first on PATH does not see it).
  const run = spawnSync('/usr/bin/python3', ['-c', script], { input: text, encoding: 'utf8' });
  if (run.error) throw run.error;
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as ReturnType<typeof parseWithPrometheusClient>;
}

const env = (): NodeJS.ProcessEnv => ({ RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl });

const NAMES = [
  'rabbit_export_last_run_start_timestamp_seconds',
  'rabbit_export_last_run_end_timestamp_seconds',
  'rabbit_export_last_success_timestamp_seconds',
  'rabbit_export_last_run_duration_seconds',
  'rabbit_export_last_run_exit_code',
  'rabbit_export_last_run_complete',
  'rabbit_export_last_run_requests',
  'rabbit_export_last_run_wire_bytes',
  'rabbit_export_last_run_archive_bytes',
  'rabbit_export_last_run_resources',
  'rabbit_export_last_run_errors',
];

describe('--metrics-file', () => {
  it('writes the last run in Prometheus text format, labelled with the folder, and keeps the last success', async () => {
    // A folder name that needs escaping in a label value.
    const backups = join(dir, 'night "A" \\ B');
    await mkdir(backups);
    const metrics = join(dir, 'rabbit.prom');
    const before = Date.now() / 1000;
    const run = await runCli(['backup', '--dir', backups, '--json', '--metrics-file', metrics], {
      register: registerBackup,
      env: env(),
    });
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as { requests: number; bytes: number; files: number; errors: number };
    const text = await readFile(metrics, 'utf8');
    expect(text).not.toContain(service.keys.readOnly);
    const first = parseWithPrometheusClient(text);
    expect(Object.keys(first.families).sort()).toEqual(NAMES.map((name) => name).sort());
    for (const family of Object.values(first.families)) {
      expect(family.type).toBe('gauge');
      expect(family.help).not.toBe('');
    }
    const value = (samples: Sample[], name: string): number | undefined => {
      const found = samples.filter((sample) => sample.name === name);
      if (found.length === 0) return undefined;
      expect(found).toHaveLength(1);
      expect(found[0]?.labels).toEqual({ dir: backups });
      return found[0]?.value;
    };
    expect(value(first.samples, 'rabbit_export_last_run_exit_code')).toBe(0);
    expect(value(first.samples, 'rabbit_export_last_run_complete')).toBe(1);
    expect(value(first.samples, 'rabbit_export_last_run_requests')).toBe(summary.requests);
    expect(value(first.samples, 'rabbit_export_last_run_archive_bytes')).toBe(summary.bytes);
    expect(value(first.samples, 'rabbit_export_last_run_wire_bytes')).toBeGreaterThan(0);
    expect(value(first.samples, 'rabbit_export_last_run_resources')).toBe(summary.files);
    expect(value(first.samples, 'rabbit_export_last_run_errors')).toBe(0);
    const start = value(first.samples, 'rabbit_export_last_run_start_timestamp_seconds') as number;
    const end = value(first.samples, 'rabbit_export_last_run_end_timestamp_seconds') as number;
    expect(start).toBeGreaterThanOrEqual(Math.floor(before));
    expect(end).toBeGreaterThanOrEqual(start);
    expect(value(first.samples, 'rabbit_export_last_run_duration_seconds')).toBeCloseTo(end - start, 2);
    expect(value(first.samples, 'rabbit_export_last_success_timestamp_seconds')).toBe(end);

    // A failed night: exit code 1, not complete, no counts it does not have, the last success carried over.
    const held = await acquireLock(join(backups, BACKUP_LOCK), 'test');
    try {
      const locked = await runCli(['backup', '--dir', backups, '--quiet', '--metrics-file', metrics], {
        register: registerBackup,
        env: env(),
      });
      expect(locked.code).toBe(1);
    } finally {
      await held.release();
    }
    const second = parseWithPrometheusClient(await readFile(metrics, 'utf8'));
    expect(value(second.samples, 'rabbit_export_last_run_exit_code')).toBe(1);
    expect(value(second.samples, 'rabbit_export_last_run_complete')).toBe(0);
    expect(value(second.samples, 'rabbit_export_last_run_requests')).toBeUndefined();
    expect(value(second.samples, 'rabbit_export_last_success_timestamp_seconds')).toBe(end);
    expect(value(second.samples, 'rabbit_export_last_run_start_timestamp_seconds')).toBeGreaterThanOrEqual(end);
    // Written by rename: no temp file is left beside it for the collector to trip over.
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('labels an export with its output path; 0 as the last success until one has succeeded', async () => {
    service.setFaults({ paths: [{ path: '/rabbit/api/prototypes/3.json', kind: '404' }] });
    const out = join(dir, 'team.zip');
    const metrics = join(dir, 'export.prom');
    const run = await runCli(['export', '--out', out, '--quiet', '--metrics-file', metrics], {
      register: registerExport,
      env: env(),
    });
    expect(run.code).toBe(3);
    const { samples } = parseWithPrometheusClient(await readFile(metrics, 'utf8'));
    const byName = new Map(samples.map((sample) => [sample.name, sample]));
    expect(byName.get('rabbit_export_last_run_exit_code')).toEqual({
      name: 'rabbit_export_last_run_exit_code',
      labels: { out },
      value: 3,
    });
    expect(byName.get('rabbit_export_last_run_complete')?.value).toBe(0);
    expect(byName.get('rabbit_export_last_run_errors')?.value).toBe(1);
    expect(byName.get('rabbit_export_last_success_timestamp_seconds')?.value).toBe(0);
  });
  it('refuses a metrics file in a missing folder, or a folder, before the run, with nothing fetched', async () => {
    const backups = join(dir, 'nights');
    for (const [metrics, words] of [
      [join(dir, 'no-such-folder', 'rabbit.prom'), /the folder .*no-such-folder does not exist; create it first/],
      [dir, /is a folder; give the path of a file in it/],
    ] as const) {
      const run = await runCli(['backup', '--dir', backups, '--metrics-file', metrics], {
        register: registerBackup,
        env: env(),
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(words);
    }
    expect(service.stats.requests).toBe(0);
    expect(await readdir(dir)).not.toContain('nights');
  });
});
