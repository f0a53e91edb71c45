import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';

/** The built CLI with stdout on /dev/full, where every write fails with ENOSPC. */
function toFullDevice(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const full = openSync('/dev/full', 'w');
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env['PATH'] ?? '' },
    stdio: ['ignore', full, 'pipe'],
  });
  closeSync(full);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe('a stdout that cannot be written', () => {
  it.each([[['--help']], [['serve', '--help']]])(
    '%j ends with exit 1 and a sentence, not a stack trace',
    async (args) => {
      const run = await toFullDevice(args);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        'rabbit-export: cannot write to stdout: no space left on the device; what was written is not whole\n',
      );
    },
  );
});
