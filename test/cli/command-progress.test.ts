import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { registerSearch } from '../../src/cli/commands/search.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import { BIN, runCli, type CliOptions, type CliRun } from '../helpers/cli.js';
import { SMALL_SAMPLE } from '../helpers/fake-service.js';
import { tempDir } from '../helpers/temp.js';
import { requireTool } from '../helpers/tools.js';
import { PROTO, exportPrototype } from '../restore/restore-helpers.js';

// issue 45: every command that can take more than a few seconds says how far it is and how long
// is left, on stderr: a bar on a terminal, a plain line at least every 5 s in a log or on a
// terminal that gives no width, nothing with --quiet or --json (whose stdout is records only).
// The sample archive is small. In a log, each command runs in-process on a clock that moves on a
// second each time it is read, so its work spans minutes of that clock in a fraction of a second of
// the wall (the display's timer is proven on a fake one in work-progress.test.ts). On a terminal,
// what is judged is what ora draws on a real one: the CLI is spawned under `script`, the slow disk
// (test/helpers/slow-disk.mjs) makes it run for seconds of its clock, as on a big archive, and the
// time lapse (test/helpers/time-lapse.mjs) runs that clock ten times as fast as the wall's, so the
// seconds between its lines pass in tenths; the CLI itself is unchanged.

const run = promisify(execFile);
const SLOW_DISK = fileURLToPath(new URL('../helpers/slow-disk.mjs', import.meta.url));
const TIME_LAPSE = fileURLToPath(new URL('../helpers/time-lapse.mjs', import.meta.url));
/** How many times as fast as the wall's the clock of each CLI here runs. */
const LAPSE = 10;
const ESC = '\u001b';

/** The environment of a CLI whose every file read waits `ms` of its own clock first (1 ms of the wall at least). */
const slowDisk = (ms: number): Record<string, string> => ({
  NODE_OPTIONS: `--import=${SLOW_DISK} --import=${TIME_LAPSE}`,
  RABBIT_TIME_LAPSE: String(LAPSE),
  RABBIT_SLOW_DISK_MS: String(Math.max(1, ms / LAPSE)),
});

/**
 * A command run in-process on a clock that moves on `stepMs` each time it is read: every report of
 * its work comes some seconds after the one before, as on a big archive or a slow service. One run
 * at a time (an in-process run has the worker's exit code to itself).
 */
function inLog(args: string[], register: NonNullable<CliOptions['register']>, more: CliOptions = {}): Promise<CliRun> {
  let at = Date.now();
  return runCli(args, { ...more, register, clock: { now: () => (at += STEP_MS) } });
}
const STEP_MS = 1_000;

const progressLines = (stderr: string): string[] => stderr.split('\n').filter((line) => line.startsWith('progress: '));

/** Each stdout line one JSON record: --json output a script reads line by line. */
function records(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A command line as `script` runs it on a pseudo terminal, `columns` wide (0: a width it does not give). */
async function onTerminal(args: string[], columns: number, env: Record<string, string>): Promise<string> {
  requireTool('/usr/bin/script');
  const width = columns > 0 ? `stty cols ${columns} rows 30; ` : '';
  const command = `${width}${process.execPath} ${BIN} ${args.map((arg) => `'${arg}'`).join(' ')}`;
  const { stdout } = await run('/usr/bin/script', ['-qfec', command, '/dev/null'], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    timeout: 120_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/** The frames ora drew (each a synchronized update), as text. */
function frames(tty: string): string[] {
  return [...tty.matchAll(new RegExp(`${ESC}\\[\\?2026h([^]*?)${ESC}\\[\\?2026l`, 'g'))].map((match) =>
    plain(match[1] ?? ''),
  );
}

/** What stays on a terminal once the frames are taken out: the command's own lines. */
function withoutFrames(tty: string): string {
  return plain(tty.replace(new RegExp(`${ESC}\\[\\?2026h[^]*?${ESC}\\[\\?2026l`, 'g'), '')).replace(/\r/g, '');
}

function plain(text: string): string {
  return text.replace(new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]`, 'g'), '');
}

let service: FakeService;
let keep: string;
let archive: string;

// The small sample: 136 entries to verify, convert and search instead of 228.
beforeAll(async () => {
  service = await startFakeService({
    seed: 1,
    dataset: SMALL_SAMPLE,
  });
  keep = await mkdtemp(join(tmpdir(), 'rabbit-command-progress-'));
  archive = join(keep, 'team.zip');
  await exportAccount({ out: archive, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
}, 60_000);

afterAll(async () => {
  await service.close();
  await rm(keep, { recursive: true, force: true });
});

describe('verify', () => {
  it('in a log: a line every 5 s with the entries checked and the time left; stdout keeps its report; --json and --quiet print none', async () => {
    // What verify prints without a display, in-process: the report the displays must leave alone.
    const quick = await runCli(['verify', archive], { register: registerVerify });
    const log = await inLog(['verify', archive], registerVerify);
    const json = await inLog(['verify', archive, '--json'], registerVerify);
    const quiet = await inLog(['verify', archive, '--quiet'], registerVerify);
    expect([quick.code, log.code, json.code, quiet.code]).toEqual([0, 0, 0, 0]);
    const lines = progressLines(log.stderr);
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const line of lines)
      expect(line).toMatch(
        /^progress: (?:checked \d+ of \d+ entries \(\d+%\), (?:\S+ left|time left not known yet)|hashed the whole file: .* of .*|starting), \S+ elapsed$/,
      );
    expect(lines.some((line) => /^progress: checked \d+ of \d+ entries \(\d+%\), \S+ left,/.test(line))).toBe(true);
    expect(log.stderr).toBe(lines.map((line) => `${line}\n`).join(''));
    expect(log.stdout).toBe(quick.stdout);
    expect(records(json.stdout)).toEqual([expect.objectContaining({ type: 'summary', command: 'verify', ok: true })]);
    expect(json.stderr).toBe('');
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).toBe(quick.stdout);
  }, 120_000);

  it('on a terminal: one line with percent, bar, count and time left, redrawn in place and cleared before the report', async () => {
    const tty = await onTerminal(['verify', archive], 100, slowDisk(4));
    const drawn = frames(tty);
    expect(drawn.length).toBeGreaterThan(3);
    for (const frame of drawn) {
      expect(frame).not.toContain('\n');
      expect(frame.length).toBeLessThanOrEqual(100);
    }
    expect(drawn.some((frame) => /checked \d+% \[#*-*\] \d+\/\d+ entries \S+ left$/.test(frame))).toBe(true);
    const afterLastFrame = tty.slice(tty.lastIndexOf(`${ESC}[?2026l`));
    expect(plain(afterLastFrame)).toMatch(/^\s*OK: team\.zip is intact and complete/);
  }, 120_000);

  it('on a terminal that gives no width: plain lines', async () => {
    const tty = await onTerminal(['verify', archive], 0, slowDisk(12));
    expect(frames(tty)).toEqual([]);
    expect(progressLines(tty.replace(/\r/g, '')).length).toBeGreaterThanOrEqual(1);
    expect(tty).toContain('OK: team.zip is intact and complete');
  }, 120_000);
});

describe('convert', () => {
  it('draw.io in a log: the archive entries converted and the time left; --json keeps stdout to its one record', async () => {
    const dir = await tempDir();
    const log = await inLog(['convert', archive, '--to', 'drawio', '--out', join(dir, 'log')], registerConvert);
    const json = await inLog(
      ['convert', archive, '--to', 'drawio', '--out', join(dir, 'json'), '--json'],
      registerConvert,
    );
    expect([log.code, json.code]).toEqual([0, 0]);
    const lines = progressLines(log.stderr);
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const line of lines)
      expect(line).toMatch(
        /^progress: (?:read \d+ manifest entries|converted \d+ of \d+ archive entries \(\d+%\), (?:\S+ left|time left not known yet)|starting), \S+ elapsed$/,
      );
    expect(lines.some((line) => line.startsWith('progress: converted '))).toBe(true);
    expect(log.stdout).toContain('5 of 5 prototypes written to');
    expect(log.stdout).not.toContain('progress');
    expect(records(json.stdout)).toEqual([expect.objectContaining({ type: 'summary', command: 'convert', ok: true })]);
    expect(json.stderr).toBe('');
  }, 120_000);

  it('wacz and a serialized bag, read back: each step in a log', async () => {
    const dir = await tempDir();
    const wacz = await inLog(
      ['convert', archive, '--to', 'wacz', '--out', join(dir, 'wacz'), '--check'],
      registerConvert,
    );
    const bag = await inLog(
      ['convert', archive, '--to', 'bagit', '--out', join(dir, 'bag'), '--serialize', 'zip', '--check'],
      registerConvert,
    );
    expect([wacz.code, bag.code]).toEqual([0, 0]);
    const step =
      /^progress: (?:(?:packaged \d+ of \d+ archive entries|listed the pages of \d+ of \d+ prototypes|serialized \d+ of \d+ files|checked \d+ of \d+ entries of the package) \(\d+%\), (?:\S+ left|time left not known yet)|writing the package|starting), \S+ elapsed$/;
    for (const result of [wacz, bag]) {
      const lines = progressLines(result.stderr);
      expect(lines.length).toBeGreaterThanOrEqual(1);
      for (const line of lines) expect(line).toMatch(step);
    }
    expect(wacz.stdout).toMatch(/a WACZ web archive of \d+ bodies/);
    expect(bag.stdout).toMatch(/a BagIt bag of \d+ bodies/);
  }, 120_000);
});

describe('search', () => {
  it('in a log: the prototypes searched; --json: every stdout line a record', async () => {
    const log = await inLog(['search', archive, 'volker'], registerSearch);
    const json = await inLog(['search', archive, 'volker', '--json'], registerSearch);
    expect([log.code, json.code]).toEqual([0, 0]);
    const lines = progressLines(log.stderr);
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const line of lines)
      expect(line).toMatch(
        /^progress: (?:searched \d of 5 prototypes \(\d+%\), (?:\S+ left|time left not known yet)|starting), \S+ elapsed$/,
      );
    expect(log.stdout).toMatch(/\d+ hits in 5 prototypes/);
    const found = records(json.stdout);
    expect(found.length).toBeGreaterThan(1);
    expect(found.slice(0, -1).every((record) => record['type'] === 'hit')).toBe(true);
    expect(found.at(-1)).toMatchObject({ type: 'summary', prototypes: 5 });
    expect(json.stderr).toBe('');
  }, 120_000);

  it('on a terminal: the bar never breaks a hit, and what stays is the hits as a log gets them', async () => {
    const quick = await runCli(['search', archive, 'page'], { register: registerSearch });
    const tty = await onTerminal(['search', archive, 'page'], 100, { ...slowDisk(300), NO_COLOR: '1' });
    expect(frames(tty).some((frame) => /^. searched \d+% \[#*-*\] \d\/5 prototypes/.test(frame))).toBe(true);
    expect(withoutFrames(tty).trim()).toBe(quick.stdout.trim());
  }, 120_000);
});

describe('restore', () => {
  // Twenty writes one at a time, each some seconds of the run's clock after the one before, as on a
  // slow service. Two services, as each restore changes the one it writes to.
  const services: FakeService[] = [];
  beforeAll(async () => {
    for (let n = 0; n < 2; n++) services.push(await startFakeService({ seed: 1 }));
  });
  afterAll(async () => Promise.all(services.map((each) => each.close())));

  /** An archive of the prototype, then every element of its pages deleted: one write apiece to restore. */
  async function wiped(live: FakeService): Promise<{ saved: string; writes: number }> {
    const saved = await exportPrototype(live, await tempDir(), 'one.zip');
    let writes = 0;
    for (const page of live.store.prototype(PROTO)?.pages ?? [])
      for (const element of [...page.elements]) {
        live.store.deleteElement(PROTO, page.id, element.id);
        writes++;
      }
    return { saved, writes };
  }

  it('in a log: the writes made of those planned; --json: one summary record on stdout', async () => {
    const [forLog, forJson] = services as [FakeService, FakeService];
    const [logged, recorded] = await Promise.all([wiped(forLog), wiped(forJson)]);
    const restore = (live: FakeService, saved: string, ...more: string[]): Promise<CliRun> =>
      inLog(['restore', saved, '--prototype', PROTO, '--concurrency', '1', ...more], registerRestore, {
        env: { RABBIT_API_KEY: live.keys.readWrite, RABBIT_BASE_URL: live.baseUrl },
      });
    const log = await restore(forLog, logged.saved);
    const json = await restore(forJson, recorded.saved, '--json');
    const writes = logged.writes;
    expect(writes).toBeGreaterThanOrEqual(15);
    expect(log.code).toBe(0);
    const lines = progressLines(log.stderr);
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const line of lines)
      expect(line).toMatch(
        new RegExp(
          `^progress: (?:made \\d+ of ${writes} writes \\(\\d+%\\), (?:\\S+ left|time left not known yet)|reading the archive and the live elements to plan), \\S+ elapsed$`,
        ),
      );
    expect(lines.some((line) => line.startsWith('progress: made '))).toBe(true);
    expect(log.stdout).toContain(`written: ${writes} created, 0 updated, 0 deleted`);
    expect(json.code).toBe(0);
    expect(records(json.stdout)).toEqual([expect.objectContaining({ type: 'summary', command: 'restore', ok: true })]);
    expect(progressLines(json.stderr)).toEqual([]);
  }, 120_000);
});
