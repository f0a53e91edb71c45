import { fileURLToPath } from 'node:url';
import { EventEmitter } from 'node:events';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { browserCommand, openInBrowser } from '../../src/cli/open-browser.js';
import { registerExport } from '../../src/cli/commands/export.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { runCli, startCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { until } from '../helpers/until.js';

let service: FakeService;
let dir: string;
useFakeService({}, (fixture) => ({ service, dir } = fixture));

describe('view --open', () => {
  it.each([
    ['linux', 'xdg-open', ['http://127.0.0.1:1/']],
    ['darwin', 'open', ['http://127.0.0.1:1/']],
    ['win32', 'cmd', ['/c', 'start', '""', 'http://127.0.0.1:1/']],
  ] as const)('on %s uses %s', (platform, command, args) => {
    expect(browserCommand('http://127.0.0.1:1/', platform)).toEqual([command, args]);
  });

  it('says false, not an exception, when there is no opener', async () => {
    const failing = () => {
      const child = Object.assign(new EventEmitter(), { unref: () => undefined });
      setImmediate(() => child.emit('error', new Error('spawn xdg-open ENOENT')));
      return child;
    };
    await expect(openInBrowser('http://127.0.0.1:1/', { platform: 'linux', run: failing })).resolves.toBe(false);
  });

  it('opens the served address with the desktop opener found on PATH', async () => {
    const zip = join(dir, 'team.zip');
    const exported = await runCli(['export', '--out', zip], {
      register: registerExport,
      env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
    });
    expect(exported.code).toBe(0);
    // A stand-in for xdg-open that writes down what it was asked to open.
    const bin = join(dir, 'bin');
    await mkdir(bin);
    const opened = join(dir, 'opened.txt');
    await writeFile(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
    await chmod(join(bin, 'xdg-open'), 0o755);
    const { child, done } = startCli(['view', zip, '--port', '0', '--open'], {
      env: { PATH: `${bin}:${process.env['PATH'] ?? ''}` },
    });
    const url = await until(() => readFile(opened, 'utf8'), { what: 'the opener', timeoutMs: 10_000, intervalMs: 50 });
    // The opener gets a page of this user's only, which sends the browser on to the served address.
    expect(url).toMatch(/^file:\/\/\/.*\/open\.html$/);
    const launch = fileURLToPath(url);
    const page = await readFile(launch, 'utf8');
    expect((await stat(launch)).mode & 0o777).toBe(0o600);
    child.kill('SIGTERM');
    const run = await done;
    const served = /at (http:\/\/127\.0\.0\.1:\d+\/\S+)/.exec(run.stdout)?.[1] ?? '';
    expect(served).not.toBe('');
    expect(page).toContain(`url=${served}"`);
  });
});
