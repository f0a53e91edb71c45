import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chmod, chown, lstat, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerBackup } from '../../src/cli/commands/backup.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { browserEnv, openInBrowser, type Spawned } from '../../src/cli/open-browser.js';
import { checkOutputFile } from '../../src/cli/output-path.js';
import { isRabbitError } from '../../src/core/errors.js';
import { redactUrl } from '../../src/core/redact.js';
import { proxySettingsFromEnv } from '../../src/client/proxy-env.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { outputPaths } from '../../src/storage/work-dir.js';
import { startPingListener, type Ping, type PingListener } from '../helpers/ping-listener.js';
import { BIN, runCli, startCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { until } from '../helpers/until.js';

const NOBODY = 65534;
let service: FakeService;
let dir: string;
useFakeService({ seed: 3 }, (fixture) => ({ service, dir } = fixture));

beforeAll(() => {
  if (process.getuid?.() !== 0)
    throw new Error('these tests plant files owned by another user (chown to nobody): run them as root, as CI does');
});

let pings: Ping[];
let monitor: PingListener;
let monitorBase: string;
beforeEach(async () => {
  monitor = await startPingListener();
  pings = monitor.pings;
  monitorBase = monitor.base;
});
afterEach(() => monitor.close());

const env = (): NodeJS.ProcessEnv => ({ RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl });

describe('export on a machine shared with other users', () => {
  it('refuses a work folder another user planted beside --out, and never writes through its symlink', async () => {
    await chmod(dir, 0o755);
    const victim = join(dir, 'notes.txt');
    await writeFile(victim, 'my notes\n');
    const out = join(dir, 'team.zip');
    const { work } = outputPaths(out);
    await mkdir(work, { mode: 0o755 });
    await symlink(victim, join(work, 'entries'));
    await chown(work, NOBODY, NOBODY);
    const run = await runCli(['export', '--out', out, '--json'], { register: registerExport, env: env() });
    expect(run.code).toBe(1);
    const line = JSON.parse(run.stdout) as { error: { code: string; next: string } };
    expect(line.error.code).toBe('UNSAFE_PATH');
    expect(line.error.next).toContain(`mv ${work} ${work}.suspect`);
    expect(await readFile(victim, 'utf8')).toBe('my notes\n');
    await expect(lstat(out)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('writes the archive 0600 and makes the backup folder 0700 under umask 000', async () => {
    const folder = join(dir, 'nightly');
    const args = ['backup', '--dir', folder, '--quiet'];
    // A real run in its own process, with the umask a careless cron job has.
    await promisify(execFile)('sh', ['-c', 'umask 000 && exec "$0" "$@"', process.execPath, BIN, ...args], {
      env: { PATH: process.env['PATH'] ?? '', ...env() },
    });
    const modes = (path: string): string =>
      (execFileSync('stat', ['-c', '%a', path], { encoding: 'utf8' }) as string).trim();
    expect(modes(folder)).toBe('700');
    const names = execFileSync('ls', ['-A', folder], { encoding: 'utf8' }).trim().split('\n');
    const zip = names.find((name) => name.endsWith('.zip')) as string;
    expect(names).toEqual(expect.arrayContaining([zip, `${zip}.sha256`, 'SHA256SUMS']));
    for (const name of [zip, `${zip}.sha256`, 'SHA256SUMS'])
      expect([name, modes(join(folder, name))]).toEqual([name, '600']);
  });

  it('refuses --force onto a FIFO, /dev/stdout or a symlink, and leaves them as they are', async () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const link = join(dir, 'link.zip');
    await writeFile(join(dir, 'target'), 'keep');
    await symlink(join(dir, 'target'), link);
    for (const path of [fifo, '/dev/stdout', link]) {
      const error = await checkOutputFile(path, { flag: '--out', force: true }).catch((caught: unknown) => caught);
      expect([path, isRabbitError(error, 'OUTPUT_KIND')]).toEqual([path, true]);
    }
    const run = await runCli(['export', '--out', fifo, '--force', '--json'], { register: registerExport, env: env() });
    expect(run.code).toBe(2);
    expect((JSON.parse(run.stdout) as { error: { code: string } }).error.code).toBe('OUTPUT_KIND');
    expect((await lstat(fifo)).isFIFO()).toBe(true);
    expect(await readFile(join(dir, 'target'), 'utf8')).toBe('keep');
  });

  it('warns, as ssh does, of a key file others can read, and goes on', async () => {
    const keyFile = join(dir, 'keys.txt');
    await writeFile(keyFile, `${service.keys.readOnly}\n`);
    await chmod(keyFile, 0o644);
    const flags = ['export', '--api-key-file', keyFile, '--quiet'];
    const { RABBIT_BASE_URL } = env();
    const loose = await runCli([...flags, '--out', join(dir, 'a.zip')], {
      register: registerExport,
      env: { RABBIT_BASE_URL },
    });
    expect(loose.code).toBe(0);
    expect(loose.stderr).toContain(`warning: the key file ${keyFile} can be read by other users`);
    expect(loose.stderr).toContain(`chmod 600 ${keyFile}`);
    await chmod(keyFile, 0o600);
    const tight = await runCli([...flags, '--out', join(dir, 'b.zip')], {
      register: registerExport,
      env: { RABBIT_BASE_URL },
    });
    expect(tight.code).toBe(0);
    expect(tight.stderr).not.toContain('warning');
  });

  it('takes the healthcheck URL from RABBIT_HEALTHCHECK_URL, so it need not be in ps', async () => {
    const run = await runCli(['backup', '--dir', join(dir, 'b'), '--quiet'], {
      register: registerBackup,
      env: { ...env(), RABBIT_HEALTHCHECK_URL: `${monitorBase}/ping/abc` },
    });
    expect(run.code).toBe(0);
    expect(pings.map((ping) => ping.path)).toEqual(['/ping/abc/start', '/ping/abc']);
  });
});

describe('a proxy password with characters that end a URL', () => {
  const password = 'p/a#s?s@w';

  it.each([
    [`http://user:${password}@proxy.example:3128`, 'http://REDACTED@proxy.example:3128'],
    [`proxy http://us:${password}@10.0.0.1:8080/ failed`, 'proxy http://REDACTED@10.0.0.1:8080/ failed'],
    ['http://bob:p@ss/x@host:1/', 'http://REDACTED@host:1/'],
    ['https://cdn.example/npm/@scope/pkg@1.2.0/a.css', 'https://cdn.example/npm/@scope/pkg@1.2.0/a.css'],
    ['http://bob:a b@c@[::1]:80', 'http://REDACTED@[::1]:80'],
    ['see http://h/x and https://u:p/q@proxy:1 then', 'see http://h/x and https://REDACTED@proxy:1 then'],
    ['HTTP_PROXY "http://us#er:p?w@h:1" is not a URL', 'HTTP_PROXY "http://REDACTED@h:1" is not a URL'],
    ['https://h/a?api_key=k1&x=1', 'https://h/a?api_key=REDACTED&x=1'],
    ['https://pidoco.com/rabbit/api/x', 'https://pidoco.com/rabbit/api/x'],
  ])('is redacted from %s', (text, redacted) => {
    expect(redactUrl(text)).toBe(redacted);
  });

  it('is hidden wherever it appears once the proxy is read from the environment', () => {
    const proxy = `http://${password}@10.0.0.2:8080`;
    proxySettingsFromEnv({ HTTPS_PROXY: proxy });
    // A user-less password that starts like a host name: only the remembered credential tells.
    expect(redactUrl(`via ${proxy}/ failed`)).toBe('via http://REDACTED@10.0.0.2:8080/ failed');
    expect(redactUrl(`echo: ${encodeURIComponent(password)}`)).toBe('echo: REDACTED');
  });

  it('appears nowhere: not in the message, the --json line or the failure ping', async () => {
    const baseUrl = service.baseUrl.replace('127.0.0.1', 'localhost');
    const run = await runCli(['export', '--out', join(dir, 'team.zip'), '--json'], {
      register: registerExport,
      env: {
        ...env(),
        RABBIT_BASE_URL: baseUrl,
        http_proxy: `http://user:${password}@127.0.0.1:1`,
        NO_PROXY: '127.0.0.1',
        RABBIT_HEALTHCHECK_URL: `${monitorBase}/ping/abc`,
      },
    });
    expect(run.code).not.toBe(0);
    expect(pings.map((ping) => ping.path)).toEqual(['/ping/abc/start', `/ping/abc/${run.code}`]);
    const failure = pings[1]?.body ?? '';
    expect(JSON.parse(failure)).toEqual(JSON.parse(run.stdout));
    expect(run.stderr).toContain('REDACTED');
    for (const text of [run.stdout, run.stderr, failure]) {
      for (const piece of [password, 'p/a', 's?s', 's@w', 'user:'])
        expect([piece, text.includes(piece)]).toEqual([piece, false]);
    }
  });
});

describe('view --open', () => {
  const secrets = {
    RABBIT_API_KEY: 'key-not-for-browsers',
    RABBIT_HEALTHCHECK_URL: 'https://hc.example/ping/secret-check',
    HTTPS_PROXY: 'http://user:proxy-password@proxy.example:3128',
    http_proxy: 'http://user:proxy-password@proxy.example:3128',
  };

  it('hands the browser an environment without the API key, the check URL or proxy credentials', async () => {
    let given: NodeJS.ProcessEnv | undefined;
    const run = (_command: string, _args: string[], childEnv: NodeJS.ProcessEnv): Spawned => {
      given = childEnv;
      return { once: () => undefined, unref: () => undefined };
    };
    void openInBrowser('http://127.0.0.1:1/', {
      platform: 'linux',
      run,
      env: { ...secrets, PATH: '/usr/bin', NO_PROXY: 'localhost', ALL_PROXY: 'http://proxy.example:3128' },
    });
    expect(given).toEqual({ PATH: '/usr/bin', NO_PROXY: 'localhost', ALL_PROXY: 'http://proxy.example:3128' });
    expect(browserEnv({ RABBIT_BASE_URL: 'x', DISPLAY: ':0' })).toEqual({ DISPLAY: ':0' });
  });

  it('starts the real opener without them', async () => {
    const zip = join(dir, 'team.zip');
    expect((await runCli(['export', '--out', zip, '--quiet'], { register: registerExport, env: env() })).code).toBe(0);
    const bin = join(dir, 'bin');
    await mkdir(bin);
    const seen = join(dir, 'opener-env.txt');
    await writeFile(join(bin, 'xdg-open'), `#!/bin/sh\nenv > '${seen}.part' && mv '${seen}.part' '${seen}'\n`);
    await chmod(join(bin, 'xdg-open'), 0o755);
    const { child, done } = startCli(['view', zip, '--port', '0', '--open'], {
      env: { PATH: `${bin}:${process.env['PATH'] ?? ''}`, ...secrets },
    });
    const text = await until(() => readFile(seen, 'utf8'), { what: 'the opener', timeoutMs: 10_000, intervalMs: 50 });
    child.kill('SIGTERM');
    await done;
    expect(text).toContain('PATH=');
    for (const secret of ['key-not-for-browsers', 'secret-check', 'proxy-password'])
      expect([secret, text.includes(secret)]).toEqual([secret, false]);
    expect(await readdir(dir)).toContain('opener-env.txt');
  });
});
