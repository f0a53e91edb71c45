// The first step of `npm test`: every program outside Node that the tests run must be there, or
// the run stops at once with one apt-get line, instead of failing test after test minutes later.
// .ci/run installs from the same list with --install, so CI and a newcomer never need different ones.
//
//   node scripts/preflight.mjs            check; exit 1 with the apt-get line when something is missing
//   node scripts/preflight.mjs --install  apt-get install what is missing (as root), then check
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

const LIST = new URL('system-tools.json', import.meta.url);

/** @returns {Array<{ tool: string; package: string; why: string }>} */
function systemTools() {
  return JSON.parse(readFileSync(LIST, 'utf8')).tools;
}

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name, env) {
  return (env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && executable(join(dir, name)));
}

/** Whether one entry of the list can be used, by the kind of check its name says. */
function present(tool, env) {
  if (tool.startsWith('python3:')) {
    // Debian's interpreter: the tests run it, and the Debian package installs into it.
    // Found, not imported: importing a module costs far more than the whole check.
    const find = `import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)`;
    const run = spawnSync('/usr/bin/python3', ['-c', find, tool.slice('python3:'.length)], { stdio: 'ignore' });
    return run.status === 0;
  }
  if (tool.startsWith('font:')) {
    const run = spawnSync('fc-list', [':', 'family'], { encoding: 'utf8', env });
    return run.status === 0 && run.stdout.toLowerCase().includes(tool.slice('font:'.length).toLowerCase());
  }
  return isAbsolute(tool) ? executable(tool) : onPath(tool, env);
}

/** The entries of the list that cannot be used in this environment. */
function missingTools(env = process.env) {
  return systemTools().filter((entry) => !present(entry.tool, env));
}

/** The one command that installs what `missing` needs, each package once. */
function installLine(missing) {
  return `apt-get install -y ${[...new Set(missing.map((entry) => entry.package))].join(' ')}`;
}

function report(missing) {
  const tools = missing.map((entry) => `${entry.tool} (${entry.package})`).join(', ');
  process.stderr.write(`npm test needs programs that are not installed: ${tools}. Install them with:\n`);
  process.stderr.write(`${installLine(missing)}\n`);
}

function install(missing) {
  const packages = [...new Set(missing.map((entry) => entry.package))];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  const added =
    update.status === 0 &&
    spawnSync('apt-get', ['install', '-y', '-qq', ...packages], { stdio: ['ignore', 'ignore', 'inherit'], env });
  if (!added || added.status !== 0) {
    process.stderr.write(`could not install the Debian packages ${packages.join(' ')}, which the tests need\n`);
    process.exit(1);
  }
}

let missing = missingTools();
if (missing.length > 0 && process.argv[2] === '--install') {
  install(missing);
  missing = missingTools();
}
if (missing.length > 0) {
  report(missing);
  process.exit(1);
}
