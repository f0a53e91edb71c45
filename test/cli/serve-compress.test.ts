import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerExport } from '../../src/cli/commands/export.js';
import { bodiesText, byteSize } from '../../src/cli/format.js';
import { runCli, startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** `serve --compress`, and what an export from it says about bytes stored and bytes on the wire. */
describe('byteSize and bodiesText', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1.0 KiB'],
    [60_784, '59.4 KiB'],
    [8.5 * 1024 * 1024, '8.5 MiB'],
    [3 * 1024 ** 4, '3.0 TiB'],
  ])('%d bytes: %s', (bytes, text) => {
    expect(byteSize(bytes)).toBe(text);
  });

  it('says how much smaller the wire was, when it was', () => {
    expect(bodiesText(8.5 * 1024 * 1024, 1.9 * 1024 * 1024)).toBe(
      '8.5 MiB stored, 1.9 MiB on the wire (4.5 x smaller)',
    );
    expect(bodiesText(2048, 2048)).toBe('2.0 KiB stored, 2.0 KiB on the wire');
    expect(bodiesText(0, 0)).toBe('0 B stored, 0 B on the wire');
  });
});

describe('serve --compress and the export summary', () => {
  it('serves compressed answers, and the summary shows bytes stored beside bytes on the wire', async () => {
    const { child, done } = startCli(['serve', '--json', '--prototypes', '1', '--compress', 'always:gzip,br']);
    const info = await new Promise<{ baseUrl: string; keys: { readOnly: string } }>((resolve, reject) => {
      let first = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        first += chunk.toString();
        if (first.includes('\n')) resolve(JSON.parse(first.split('\n')[0] as string));
      });
      child.on('close', () => reject(new Error(`serve ended early: ${first}`)));
    });
    try {
      const response = await fetch(`${info.baseUrl}/rabbit/api/prototypes.json?api_key=${info.keys.readOnly}`);
      expect(response.headers.get('content-encoding')).toBe('gzip, br');

      const env = { RABBIT_BASE_URL: info.baseUrl, RABBIT_API_KEY: info.keys.readOnly };
      const dir = await tempDir();
      const json = await runCli(['export', '--out', join(dir, 'a.zip'), '--json'], { env, register: registerExport });
      expect(json.code).toBe(0);
      const summary = JSON.parse(json.stdout.trim()) as Record<string, number>;
      expect(summary['storedBytes']).toBeGreaterThan(0);
      expect(summary['wireBytes']).toBeGreaterThan(0);
      expect(summary['wireBytes']).toBeLessThan((summary['storedBytes'] as number) * 0.8);
      // The fields that were there before keep their meaning: `bytes` is the archive's size.
      expect(summary).toMatchObject({ complete: true, bytes: expect.any(Number), requests: expect.any(Number) });

      const human = await runCli(['export', '--out', join(dir, 'b.zip')], { env, register: registerExport });
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/^bodies: \d+\.\d KiB stored, \d+\.\d KiB on the wire \(\d+\.\d x smaller\)$/m);
    } finally {
      child.kill('SIGTERM');
      await done;
    }
  });

  it('refuses a --compress it does not know', async () => {
    for (const spec of ['sometimes', 'always:zstd']) {
      const run = await startCli(['serve', '--compress', spec]).done;
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--compress');
    }
  });
});
