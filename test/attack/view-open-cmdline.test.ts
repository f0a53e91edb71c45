// Shows: `view --open` hands the opener the URL with the archive's token on its command line, which every local user reads in /proc/<pid>/cmdline.
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerExport } from '../../src/cli/commands/export.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { runCli, startCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { until } from '../helpers/until.js';

/**
 * The token in the URL `view` prints is the one secret between the server and its user (view-gate.ts):
 * another local user who learns it reads the whole archive from 127.0.0.1. A stand-in opener writes
 * what another user sees of it: its own /proc/<pid>/cmdline, a file every user may read.
 */

let service: FakeService;
let dir: string;
useFakeService({ seed: 3 }, (fixture) => ({ service, dir } = fixture));

describe('view --open on a machine shared with other users', () => {
  it('puts the token on no command line', async () => {
    const zip = join(dir, 'team.zip');
    const env = { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl };
    expect((await runCli(['export', '--out', zip, '--quiet'], { register: registerExport, env })).code).toBe(0);
    const bin = join(dir, 'bin');
    await mkdir(bin);
    const seen = join(dir, 'opener-cmdline.txt');
    await writeFile(
      join(bin, 'xdg-open'),
      `#!/bin/sh\nstat -c %a /proc/$$/cmdline > '${seen}.part' && tr '\\0' ' ' < /proc/$$/cmdline >> '${seen}.part' && mv '${seen}.part' '${seen}'\n`,
    );
    await chmod(join(bin, 'xdg-open'), 0o755);
    const { child, done } = startCli(['view', zip, '--port', '0', '--open'], {
      env: { PATH: `${bin}:${process.env['PATH'] ?? ''}` },
    });
    const text = await until(() => readFile(seen, 'utf8'), { what: 'the opener', timeoutMs: 10_000, intervalMs: 50 });
    child.kill('SIGTERM');
    const { stdout } = await done;
    const token = /http:\/\/127\.0\.0\.1:\d+\/([^/\s]+)\//.exec(stdout)?.[1];
    expect(token).toBeDefined();
    // Readable by every user: what the opener's command line holds is no secret.
    expect(text.split('\n')[0]).toBe('444');
    expect((await stat(seen)).size).toBeGreaterThan(0);
    expect(text.includes(token as string)).toBe(false);
  });
});
