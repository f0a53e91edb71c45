import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createProgress, progressMode } from '../../src/cli/progress.js';
import { BIN } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const stream = (isTTY: boolean, columns?: number): NodeJS.WriteStream => ({ isTTY, columns }) as unknown as NodeJS.WriteStream;

describe('progress display', () => {
  it.each([
    [true, 120, false, 'spinner'],
    [true, 0, false, 'lines'],
    [true, undefined, false, 'lines'],
    [false, 120, false, 'lines'],
    [true, 120, true, 'silent'],
  ] as const)('a terminal %s of %s columns, silent %s: %s', (isTTY, columns, silent, mode) => {
    expect(progressMode(stream(isTTY, columns), silent)).toBe(mode);
  });

  it('counts what the export reports', () => {
    const written: string[] = [];
    const out = { write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    const progress = createProgress('lines', out, 60_000);
    progress.onEvent({ type: 'response', source: '/a', status: 200, bytes: 2048, queued: 3, inFlight: 2 });
    progress.onEvent({ type: 'retry', source: '/a', attempt: 1, delayMs: 10, reason: '503' });
    progress.onEvent({ type: 'error', error: { source: '/b', message: 'gone\nfor good' } });
    progress.stop();
    expect(progress.counts).toMatchObject({ requests: 1, retries: 1, errors: 1, bytes: 2048, queued: 3, inFlight: 2 });
    expect(written.join('')).toContain('error: /b: gone for good');
  });

  // `script` gives the CLI a pseudo terminal that reports 0 columns; ora once looped forever there.
  it.skipIf(!existsSync('/usr/bin/script'))('finishes on a terminal that reports no width', async () => {
    const dir = await tempDir();
    const run = promisify(execFile);
    const { stdout } = await run('/usr/bin/script', ['-qc', `${process.execPath} ${BIN} demo --out ${join(dir, 'd.zip')}`, '/dev/null'], {
      timeout: 60_000,
      maxBuffer: 4 * 1024 * 1024,
    });
    expect(stdout).toContain('is intact and complete');
  });
});
