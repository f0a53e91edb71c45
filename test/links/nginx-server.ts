import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { requireTool, runTool } from '../convert/tools.js';
import { until } from '../helpers/until.js';

/**
 * nginx itself judging the rules `links` writes: a configuration in `dir` that includes them in
 * one server on a loopback port, checked by `nginx -t`, then run for the test to ask.
 */
const NGINX = requireTool('/usr/sbin/nginx', 'nginx-light');

export interface NginxSite {
  /** `nginx -t` on the configuration, as it answered. */
  check: { code: number; stderr: string };
  /** Runs nginx while `use` asks it paths, then stops it. */
  serve<T>(use: (get: (path: string) => Promise<NginxAnswer>) => Promise<T>): Promise<T>;
}

export interface NginxAnswer {
  status: number;
  location: string | string[] | undefined;
}

export async function nginxSite(dir: string, rules: string): Promise<NginxSite> {
  await writeFile(join(dir, 'links.conf'), rules);
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  await writeFile(
    conf,
    `daemon off;\nmaster_process off;\npid ${join(dir, 'nginx.pid')};\nerror_log ${join(dir, 'nginx-error.log')};\n` +
      `events {}\nhttp {\n  access_log off;\n  client_body_temp_path ${dir};\n  proxy_temp_path ${dir};\n` +
      `  server {\n    listen 127.0.0.1:${port};\n    include ${join(dir, 'links.conf')};\n  }\n}\n`,
  );
  const check = await runTool(NGINX, ['-t', '-p', dir, '-c', conf]);
  const get = async (path: string): Promise<NginxAnswer> => {
    const answer = await request(`http://127.0.0.1:${port}${path}`);
    await answer.body.dump();
    return { status: answer.statusCode, location: answer.headers.location };
  };
  return {
    check,
    async serve(use) {
      const nginx = spawn(NGINX, ['-p', dir, '-c', conf], { stdio: 'ignore' });
      const exited = once(nginx, 'exit');
      try {
        await waitForPort(port);
        return await use(get);
      } finally {
        nginx.kill();
        await exited;
      }
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

async function waitForPort(port: number): Promise<void> {
  await until(
    async () => {
      const answer = await request(`http://127.0.0.1:${port}/`);
      await answer.body.dump();
      return true;
    },
    { what: `nginx listening on ${port}`, timeoutMs: 10_000, intervalMs: 25 },
  );
}
