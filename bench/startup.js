// Start-up (issue 9 point 5): `--version` and `export --help` against node doing nothing.
import { spawnSync } from 'node:child_process';
import { BIN } from './lib.js';

const RUNS = 7;

function medianMs(args) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const started = process.hrtime.bigint();
    const result = spawnSync(process.execPath, args, { stdio: 'ignore' });
    if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)];
}

export function startupBench() {
  const node = medianMs(['-e', '0']);
  const rows = [
    ['node -e 0', node],
    ['rabbit-export --version', medianMs([BIN, '--version'])],
    ['rabbit-export export --help', medianMs([BIN, 'export', '--help'])],
  ];
  console.log(`\nstart-up (median of ${RUNS}; goal: within 1.5 x node -e 0)`);
  console.log('| command | ms | x node |');
  console.log('|---|---|---|');
  for (const [label, ms] of rows) console.log(`| ${label} | ${ms.toFixed(0)} | ${(ms / node).toFixed(2)} |`);
  return rows;
}
