import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createProgress, progressMode } from '../../src/cli/progress.js';
import { steppedClock } from '../helpers/stepped-clock.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { BIN, runCli, type CliRun } from '../helpers/cli.js';
import { requestHold, type RequestHold } from '../helpers/sleep-gate.js';
import { SMALL_SAMPLE } from '../helpers/fake-service.js';
import { tempDir } from '../helpers/temp.js';
import { requireTool } from '../helpers/tools.js';

const stream = (isTTY: boolean, columns?: number): NodeJS.WriteStream =>
  ({ isTTY, columns }) as unknown as NodeJS.WriteStream;
const run = promisify(execFile);
const TIME_LAPSE = fileURLToPath(new URL('../helpers/time-lapse.mjs', import.meta.url));

describe('progress display', () => {
  it.each([
    [true, 120, {}, 'spinner'],
    [true, 0, {}, 'lines'],
    [true, undefined, {}, 'lines'],
    [false, 120, {}, 'lines'],
    [true, 120, { quiet: true }, 'silent'],
    [false, 120, { quiet: true, statsIntervalMs: 1000 }, 'silent'],
    // --json prints exactly one line unless progress records are asked for.
    [true, 120, { json: true }, 'silent'],
    [false, undefined, { json: true }, 'silent'],
    [false, undefined, { json: true, statsIntervalMs: 1000 }, 'json'],
    [false, undefined, { json: true, quiet: true, statsIntervalMs: 1000 }, 'json'],
    [false, undefined, { json: true, statsIntervalMs: 0 }, 'silent'],
  ] as const)('a terminal %s of %s columns, %j: %s', (isTTY, columns, choice, mode) => {
    expect(progressMode(stream(isTTY, columns), choice)).toBe(mode);
  });

  it('counts what the export reports', async () => {
    const written: string[] = [];
    const out = { write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    const progress = await createProgress('lines', out, 60_000);
    progress.onEvent({ type: 'response', source: '/a', status: 200, bytes: 2048, queued: 3, inFlight: 2 });
    progress.onEvent({ type: 'retry', source: '/a', attempt: 1, delayMs: 10, reason: '503' });
    progress.onEvent({ type: 'error', error: { source: '/b', message: 'gone\nfor good' } });
    progress.stop();
    expect(progress.counts).toMatchObject({ requests: 1, retries: 1, errors: 1, bytes: 2048, queued: 3, inFlight: 2 });
    expect(progress.snapshot()).toMatchObject({ requests: 1, retries: 1, errors: 1, bytes: 2048 });
    expect(written.join('')).toContain('error: /b: gone for good');
  });
});

describe('progress of a real export (issue 15)', () => {
  let service: FakeService;
  let hold: RequestHold;
  /** A real wait per request instead of the hold. */
  let latencyMs: number | undefined;
  // One service for these tests (the runs only read it), of the small sample (111 requests, not 197).
  // Every request goes through the hold: answered at once, but for one the test chooses.
  beforeAll(async () => {
    service = await startFakeService({
      dataset: SMALL_SAMPLE,
      latencyMs: 600_000,
      sleep: (ms) => (latencyMs === undefined ? hold.sleep(ms) : sleep(latencyMs)),
    });
  });
  afterAll(() => service.close());
  beforeEach(() => {
    hold = requestHold();
    latencyMs = undefined;
  });
  const env = (): Record<string, string> => ({
    RABBIT_API_KEY: service.keys.readOnly,
    RABBIT_BASE_URL: service.baseUrl,
  });
  const ESC = '\u001b';
  const plain = (text: string): string => text.replace(new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]`, 'g'), '');

  /**
   * The CLI in-process with a timer the test steps (the run's, which the display keeps time on):
   * held from the 20th request on, in the middle of the crawl, while the timer is moved on by
   * `intervalMs` twice, then let go to its end.
   */
  async function midCrawl(args: string[], intervalMs: number): Promise<CliRun> {
    const stepped = steppedClock();
    const held = hold.from(20);
    const running = runCli(args, { register: registerExport, env: env(), clock: { timer: stepped.timer } });
    await held;
    stepped.step(intervalMs);
    stepped.step(intervalMs);
    hold.release();
    return await running;
  }

  // `script` gives the CLI a pseudo terminal that reports 0 columns; ora once looped forever there.
  it('finishes on a terminal that reports no width', async () => {
    requireTool('/usr/bin/script');
    const dir = await tempDir();
    const { stdout } = await run(
      '/usr/bin/script',
      ['-qc', `${process.execPath} ${BIN} export --out ${join(dir, 'n.zip')}`, '/dev/null'],
      { timeout: 60_000, maxBuffer: 4 * 1024 * 1024, env: { PATH: process.env['PATH'] ?? '', ...env() } },
    );
    expect(stdout).toMatch(/^complete: 5 prototypes/m);
    // Plain lines, as in a log: no bar's synchronized frames.
    expect(stdout).toMatch(/^progress: done, /m);
    expect(stdout).not.toContain(`${ESC}[?2026h`);
  });

  it('on a terminal: one line with percent, bar and time left, redrawn in place and cleared at the end', async () => {
    requireTool('/usr/bin/script');
    // 111 requests, 2 at a time, 5 ms each, on a CLI whose clock (test/helpers/time-lapse.mjs)
    // runs ten times as fast as the wall's: a crawl of about three seconds of its time, some
    // frames of the bar, in a third of a second.
    latencyMs = 5;
    const dir = await tempDir();
    const command = `stty cols 100 rows 30; ${process.execPath} ${BIN} export --out ${join(dir, 'a.zip')} --concurrency 2`;
    const { stdout } = await run('/usr/bin/script', ['-qfec', command, '/dev/null'], {
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
      env: {
        PATH: process.env['PATH'] ?? '',
        NODE_OPTIONS: `--import=${TIME_LAPSE}`,
        RABBIT_TIME_LAPSE: '10',
        ...env(),
      },
    });
    // Every redraw is one synchronized frame: never more than the terminal's width, never a newline.
    const frames = [...stdout.matchAll(new RegExp(`${ESC}\\[\\?2026h([^]*?)${ESC}\\[\\?2026l`, 'g'))].map((match) =>
      plain(match[1] ?? ''),
    );
    expect(frames.length).toBeGreaterThan(3);
    for (const frame of frames) {
      expect(frame).not.toContain('\n');
      expect(frame.length).toBeLessThanOrEqual(100);
    }
    expect(
      frames.some((frame) => /crawl \d+% \[#+-*\] \d+\/~\d+ \d+ req\/s .* \d+s left \d\/5 prototypes/.test(frame)),
    ).toBe(true);
    // The last frame is erased before the summary, which is all that stays.
    const afterLastFrame = stdout.slice(stdout.lastIndexOf(`${ESC}[?2026l`));
    expect(afterLastFrame).toMatch(new RegExp(`${ESC}\\[0?K(?:${ESC}\\[\\?25h)?complete: 5 prototypes`));
    expect(plain(afterLastFrame)).not.toMatch(/\d+% \[|prototypes \d+ retries/);
    expect(stdout).toMatch(/time: crawl \d+\.\d s, requisites \d+\.\d s, writing \d+\.\d s; \d+\.\d req\/s/);
  });

  it('into a log: a plain line every --stats-interval', async () => {
    const dir = await tempDir();
    const result = await midCrawl(
      ['export', '--out', join(dir, 'b.zip'), '--concurrency', '2', '--stats-interval', '1s'],
      1_000,
    );
    expect(result.code).toBe(0);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('progress: '));
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines.slice(0, -1))
      expect(line).toMatch(
        /^progress: \w+ (?:\d+|--)%, \d+(?:\/~?\d+)? resources, .* req\/s, .*\d\/[5?] prototypes, \d+ requests made, .* 0 retries, 0 resources failed/,
      );
    // The last is the whole run's: its average rate and time, no percent, no `--`, nothing left.
    const last = lines.at(-1) ?? '';
    expect(last).toMatch(
      /^progress: done, \d+ resources, \d+ requests made, \d+\.\d req\/s and \d+\.\d\d MiB\/s on average, 5\/5 prototypes, .*, 0 retries, 0 resources failed, \d+s elapsed$/,
    );
    expect(last).not.toMatch(/--|%|left/);
    // It is the last progress line of the log: the summary follows it.
    expect(result.stderr.slice(result.stderr.indexOf(last) + last.length).trim()).not.toContain('progress:');
    expect(result.stderr).not.toContain(ESC);
  });

  it('with --json and --stats-interval: progress records, then exactly one summary', async () => {
    const dir = await tempDir();
    const result = await midCrawl(
      ['export', '--out', join(dir, 'c.zip'), '--concurrency', '2', '--json', '--stats-interval', '1s'],
      1_000,
    );
    expect(result.code).toBe(0);
    const records = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; [key: string]: unknown });
    const progress = records.filter((record) => record.type === 'progress');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]).toEqual(
      expect.objectContaining({
        phase: expect.any(String),
        done: expect.any(Number),
        requests: expect.any(Number),
        retries: 0,
        errors: 0,
      }),
    );
    expect(progress.at(-1)).toMatchObject({ phase: 'done', percent: 100, etaSeconds: 0, requestsNotStarted: 0 });
    expect(records.filter((record) => record.type === 'summary')).toHaveLength(1);
    expect(records.at(-1)).toMatchObject({ type: 'summary', ok: true, complete: true, prototypes: 5 });
    expect(records.at(-1)?.['phases']).toEqual({
      crawlMs: expect.any(Number),
      requisitesMs: expect.any(Number),
      writingMs: expect.any(Number),
    });
    expect(records.at(-1)?.['requestsPerSecond']).toBeGreaterThan(0);
    expect(result.stderr).toBe('');
  });

  it('with --json alone: exactly one line, the summary', async () => {
    const dir = await tempDir();
    hold.release();
    const result = await runCli(['export', '--out', join(dir, 'd.zip'), '--concurrency', '4', '--json'], {
      register: registerExport,
      env: env(),
    });
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ type: 'summary', ok: true });
  });
});
