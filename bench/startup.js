// Start-up (issue 9 point 5): `--version` and `export --help` against node doing nothing, and how
// soon `export` sends its first request.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, run, serve } from './lib.js';

const RUNS = 11;
export const FIRST_REQUEST_GOAL_MS = 300;

const median = (times) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)];

/**
 * Median wall time of each command line, spawn to exit. The commands take turns, one run of each
 * per round, so a burst of load on this shared machine falls on all of them alike.
 */
function mediansMs(commands) {
  const times = commands.map(() => []);
  for (let i = 0; i < RUNS; i++) {
    commands.forEach((args, j) => {
      const started = process.hrtime.bigint();
      const result = spawnSync(process.execPath, args, { stdio: 'ignore' });
      if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`);
      times[j].push(Number(process.hrtime.bigint() - started) / 1e6);
    });
  }
  return times.map(median);
}

/**
 * A loopback relay in front of the fake service: it notes when the first request of a run
 * arrives and passes every request on unchanged, so the export runs to the end as usual.
 */
async function startRelay(target) {
  let first;
  const server = createServer((req, res) => {
    first ??= process.hrtime.bigint();
    const upstream = request(new URL(req.url, target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}`,
    reset: () => (first = undefined),
    firstAt: () => first,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Spawn of `export` to its first request at the service: process start and module loading included. */
async function firstRequestMs() {
  const service = await serve(['--prototypes', '1', '--pages', '2', '--elements', '2']);
  const relay = await startRelay(service.baseUrl);
  const dir = await mkdtemp(join(tmpdir(), 'rabbit-bench-first-'));
  try {
    const times = [];
    for (let i = 0; i < RUNS; i++) {
      relay.reset();
      const started = process.hrtime.bigint();
      const result = await run(
        ['export', '--out', join(dir, `first-${i}.zip`), '--json', '--base-url', relay.baseUrl],
        {
          RABBIT_API_KEY: service.keys.readOnly,
        },
      ).done;
      if (result.code !== 0) throw new Error(`export exited ${result.code}: ${result.stderr}`);
      times.push(Number(relay.firstAt() - started) / 1e6);
    }
    return median(times);
  } finally {
    await relay.close();
    await service.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function startupBench() {
  const [node, version, help] = mediansMs([
    ['-e', '0'],
    [BIN, '--version'],
    [BIN, 'export', '--help'],
  ]);
  const rows = [
    ['node -e 0', node],
    ['rabbit-export --version', version],
    ['rabbit-export export --help', help],
  ];
  console.log(`\nstart-up (median of ${RUNS}; goal: within 1.5 x node -e 0)`);
  console.log('| command | ms | x node |');
  console.log('|---|---|---|');
  for (const [label, ms] of rows) console.log(`| ${label} | ${ms.toFixed(0)} | ${(ms / node).toFixed(2)} |`);
  const firstRequest = await firstRequestMs();
  console.log(
    `export: first request at the service ${firstRequest.toFixed(0)} ms after spawn (median of ${RUNS}; goal <= ${FIRST_REQUEST_GOAL_MS} ms)`,
  );
  return { rows, firstRequest };
}
