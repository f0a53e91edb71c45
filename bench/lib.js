// Shared by the benches: the CLI as a child process, the fake service in its own process, and
// CPU and peak RSS of a measured child.
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const BIN = fileURLToPath(new URL('../bin/rabbit-export.js', import.meta.url));
const PROBE = pathToFileURL(fileURLToPath(new URL('./usage-probe.js', import.meta.url))).href;
export const MiB = 1024 * 1024;

/** A node child; `nodeArgs` go before the script. */
export function runNode(args, { env = {}, nodeArgs = [] } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done, lines: () => stdout.split('\n').filter(Boolean) };
}

export function run(args, env = {}) {
  return runNode([BIN, ...args], { env });
}

let probes = 0;

/**
 * Runs the CLI once and measures it: wall time from spawn to exit (process start included), and
 * the child's own CPU (user + sys, every thread) and peak RSS, reported by usage-probe.js.
 */
export async function measured(args, env = {}) {
  const file = join(tmpdir(), `rabbit-bench-usage-${process.pid}-${++probes}.json`);
  const started = process.hrtime.bigint();
  const running = runNode([BIN, ...args], {
    env: { ...env, RABBIT_BENCH_USAGE_FILE: file },
    nodeArgs: ['--import', PROBE],
  });
  // When the first output came (search's first hit), from the same start as the wall time.
  let firstOutputMs;
  running.child.stdout.once('data', () => (firstOutputMs = Number(process.hrtime.bigint() - started) / 1e6));
  const result = await running.done;
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  let usage = { userUs: NaN, systemUs: NaN, maxRssKiB: NaN };
  try {
    usage = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    // Killed before it could report: the figures stay NaN and show up as such.
  }
  await rm(file, { force: true });
  return {
    ...result,
    wallMs,
    firstOutputMs,
    cpuMs: (usage.userUs + usage.systemUs) / 1000,
    maxRss: usage.maxRssKiB * 1024,
  };
}

/** `rabbit-export serve --json` in its own process, until stop(). */
export async function serve(args) {
  const server = run(['serve', '--json', ...args]);
  while (server.lines().length === 0) {
    if (server.child.exitCode !== null) throw new Error(`serve failed: ${(await server.done).stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const info = JSON.parse(server.lines()[0]);
  return {
    ...info,
    async stop() {
      server.child.kill('SIGTERM');
      const { stdout } = await server.done;
      return JSON.parse(stdout.trim().split('\n').at(-1)).stats;
    },
  };
}
