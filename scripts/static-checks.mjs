// The checks `npm test` makes before the test suite, run side by side: the typecheck, ESLint,
// Prettier and the build each use one core, and one after the other they cost a minute of waiting on
// a two-core machine. Each one's output is printed whole when it ends, so outputs never interleave;
// the exit code is the first failure's.
import { spawn } from 'node:child_process';

const CACHE = 'node_modules/.cache/rabbit-export';

const CHECKS = [
  [
    'typecheck',
    'npm',
    ['run', 'typecheck', '--silent', '--', '--incremental', '--tsBuildInfoFile', `${CACHE}/typecheck.tsbuildinfo`],
  ],
  ['lint', 'npm', ['run', 'lint', '--silent']],
  ['format', 'npx', ['prettier', '--check', '.', '--cache', '--log-level', 'warn']],
  ['build', 'npm', ['run', 'build', '--silent']],
];

function run([name, command, args]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ name, code: 1, output: `${output}${error.message}\n` }));
    child.on('close', (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), output }));
  });
}

let failed = 0;
await Promise.all(
  CHECKS.map(async (check) => {
    const result = await run(check);
    if (result.output.trim() !== '')
      process.stdout.write(result.output.endsWith('\n') ? result.output : `${result.output}\n`);
    if (result.code !== 0) {
      process.stderr.write(`static checks: ${result.name} failed (exit ${result.code})\n`);
      failed ||= result.code;
    }
  }),
);
process.exitCode = failed;
