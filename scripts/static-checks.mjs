// The checks `npm test` makes besides the test suite, run side by side: the typecheck, ESLint,
// Prettier and the build each use one core, and one after the other they cost a minute of waiting on
// a two-core machine. npm's cache of the dependencies (scripts/cache-dependencies.mjs, for the
// packaging test) is filled beside them.
//
//   node scripts/static-checks.mjs                     the checks; each output printed whole when it ends
//   node scripts/static-checks.mjs --then vitest run   the command too (npm test's test suite)
//
// With --then, the command starts as soon as what it needs is there (the build, the cache) while
// the typecheck, ESLint and Prettier go on beside it: their minute of CPU fills the suite's waits
// instead of coming before it. A check that fails stops the command at once, as it would have kept
// it from starting. Check outputs are held until the command has ended, so nothing interleaves with
// its own. The exit code is the first failure's.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';

const CACHE = 'node_modules/.cache/rabbit-export';

/**
 * The two projects `npm run typecheck` checks, as tsc --build projects that keep what they found in
 * CACHE: when no file of a project has changed since it last checked clean, tsc --build says so
 * from the files' times in half a second, where even an incremental `tsc -p` parses every file
 * again (some five seconds). A project that changed is checked as `npm run typecheck` checks it,
 * only what changed and what depends on it anew. Each config extends the project's own and only
 * adds where the record goes; it is rewritten only when its text changes, as its time counts too.
 */
function typecheckProjects() {
  mkdirSync(CACHE, { recursive: true });
  const projects = [
    ['typecheck-browser', 'src/site/browser/tsconfig.json'],
    ['typecheck', 'tsconfig.json'],
  ];
  const record = (name) => join(CACHE, `${name}.tsbuildinfo`);
  // tsc --build looks at the times of the projects' own files, not of the dependencies' types: a
  // record older than the last `npm install` or `npm ci` is dropped, and that check runs in full.
  const installed = mtime('node_modules/.package-lock.json');
  return projects.map(([name, base]) => {
    if (installed === undefined || installed > (mtime(record(name)) ?? Infinity)) rmSync(record(name), { force: true });
    const config = join(CACHE, `${name}.tsconfig.json`);
    const text = `${JSON.stringify(
      {
        extends: `../../../${base}`,
        compilerOptions: { noEmit: true, incremental: true, tsBuildInfoFile: `./${name}.tsbuildinfo` },
      },
      null,
      2,
    )}\n`;
    let current;
    try {
      current = readFileSync(config, 'utf8');
    } catch {
      current = undefined;
    }
    if (current !== text) writeFileSync(config, text);
    return config;
  });
}

function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

const CHECKS = [
  ['typecheck', 'npx', ['tsc', '--build', ...typecheckProjects()]],
  // ESLint as `npm run lint` runs it, but skipping the files that linted clean and whose types cannot
  // have changed since (scripts/lint.mjs); a clean checkout lints everything.
  ['lint', process.execPath, ['scripts/lint.mjs']],
  ['format', 'npx', ['prettier', '--check', '.', '--cache', '--log-level', 'warn']],
  ['build', 'npm', ['run', 'build', '--silent']],
  ['dependencies', process.execPath, ['scripts/cache-dependencies.mjs']],
];
/** What the command after --then needs before it starts: the CLI it spawns, the packages it installs offline. */
const NEEDED_FIRST = new Set(['build', 'dependencies']);

/**
 * The niceness of the checks that run beside the command (the typecheck, ESLint, Prettier): the
 * suite's workers come first, and the checks take the CPU the suite leaves, between its files and
 * while it waits on what it spawned. A relint after a change (half a minute of CPU) then lengthens
 * the suite's run by what it could not fit in, not by all of it.
 */
const BESIDE_NICENESS = 10;

function run([name, command, args], beside) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    // What the check starts (npx's tsc and prettier) inherits it. Not allowed somewhere: it runs as it is.
    if (beside && child.pid !== undefined) {
      try {
        setPriority(child.pid, BESIDE_NICENESS);
      } catch {
        // A platform or a sandbox that refuses: the checks run at the suite's priority, as before.
      }
    }
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ name, code: 1, output: `${output}${error.message}\n` }));
    child.on('close', (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), output }));
  });
}

function report(result) {
  if (result.output.trim() !== '')
    process.stdout.write(result.output.endsWith('\n') ? result.output : `${result.output}\n`);
  if (result.code !== 0) process.stderr.write(`static checks: ${result.name} failed (exit ${result.code})\n`);
}

const thenAt = process.argv.indexOf('--then');
const command = thenAt === -1 ? [] : process.argv.slice(thenAt + 1);
let failed = 0;
/** The command, while it runs. */
let suite;
const held = [];
const checks = CHECKS.map(async (check) => {
  const result = await run(check, command.length > 0 && !NEEDED_FIRST.has(check[0]));
  if (result.code !== 0) {
    failed ||= result.code;
    // Ctrl-C, as a person would stop it: the suite ends its workers and what they started.
    suite?.kill('SIGINT');
  }
  if (command.length === 0) report(result);
  else held.push(result);
  return result;
});

let suiteCode = 0;
if (command.length > 0) {
  await Promise.all(checks.filter((_, index) => NEEDED_FIRST.has(CHECKS[index][0])));
  if (failed === 0) {
    suiteCode = await new Promise((resolve) => {
      suite = spawn(command[0], command.slice(1), { stdio: 'inherit' });
      suite.on('error', (error) => {
        process.stderr.write(`static checks: cannot run ${command.join(' ')}: ${error.message}\n`);
        resolve(1);
      });
      suite.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
    suite = undefined;
  }
}
await Promise.all(checks);
for (const result of held) report(result);
process.exitCode = failed || suiteCode;
