// `npm install -g rabbit-export-X.tgz` looks up each dependency's registry document, which
// `npm ci` never caches (it reads the lock). The packaging test installs `npm pack`'s tarball
// offline, as a user without a network would; this caches those documents for the locked versions
// beforehand, outside any test (npm test and .ci/run run it). With --prefer-offline a machine that
// has them already asks the registry nothing.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const lockText = readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8');
const lock = JSON.parse(lockText);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

// Caching what is cached already still costs two runs of npm, seconds of CPU on every npm test. A
// stamp beside the typecheck's record says for which package.json and lock, and for which npm
// cache, the last run succeeded: the same three skip the work. The cache is known by its folder's
// identity, so `npm cache clean --force` (which removes the folder) brings the work back; deleting
// node_modules/.cache does too.
const STAMP = fileURLToPath(new URL('../node_modules/.cache/rabbit-export/dependencies.stamp', import.meta.url));
const stamp = (() => {
  const cache =
    process.env.npm_config_cache ||
    spawnSync(npm, ['config', 'get', 'cache'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).stdout.trim();
  let folder;
  try {
    const { ino, birthtimeMs } = statSync(join(cache, '_cacache'));
    folder = `${ino}:${birthtimeMs}`;
  } catch {
    return undefined;
  }
  const pkg = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
  return `${createHash('sha256').update(pkg).update('\0').update(lockText).digest('hex')} ${cache} ${folder}\n`;
})();
const stamped = (() => {
  try {
    return readFileSync(STAMP, 'utf8');
  } catch {
    return undefined;
  }
})();
if (stamp !== undefined && stamp === stamped) process.exit(0);
rmSync(STAMP, { force: true });
const specs = Object.entries(lock.packages)
  .filter(([path, entry]) => path !== '' && !entry.dev && !entry.devOptional && !entry.link)
  .map(([path, entry]) => `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${entry.version}`);
const result = spawnSync(npm, ['cache', 'add', '--prefer-offline', ...specs], {
  stdio: ['ignore', 'ignore', 'inherit'],
});
if (result.status !== 0) {
  process.stderr.write('could not cache the registry documents of the dependencies (see above)\n');
  process.exit(result.status ?? 1);
}

// A global install of the tarball does not read our lock: a dependency that asks for any version
// of another (warcio's @types/stream-buffers asks for @types/node@*) gets the newest one there is,
// which the lock does not hold. Those are resolved as a user's install would resolve them, in a
// project that depends on this folder alone, and cached too.
const scratch = mkdtempSync(join(tmpdir(), 'rabbit-cache-'));
try {
  const here = fileURLToPath(new URL('..', import.meta.url));
  writeFileSync(
    join(scratch, 'package.json'),
    JSON.stringify({ private: true, dependencies: { 'rabbit-export': `file:${here}` } }),
  );
  const resolved = spawnSync(
    npm,
    [
      'install',
      '--package-lock-only',
      '--omit=dev',
      '--ignore-scripts',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--install-links',
    ],
    {
      cwd: scratch,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  if (resolved.status !== 0) {
    process.stderr.write('could not resolve the dependencies a user install gets (see above)\n');
    process.exit(resolved.status ?? 1);
  }
  const fresh = JSON.parse(readFileSync(join(scratch, 'package-lock.json'), 'utf8'));
  const more = Object.entries(fresh.packages)
    .filter(
      ([path, entry]) =>
        path.includes('node_modules/') &&
        !entry.dev &&
        !entry.link &&
        entry.version &&
        !entry.resolved?.startsWith('file:'),
    )
    .map(
      ([path, entry]) => `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${entry.version}`,
    )
    .filter((spec) => !specs.includes(spec) && !spec.startsWith('rabbit-export@'));
  if (more.length > 0) {
    const cached = spawnSync(npm, ['cache', 'add', '--prefer-offline', ...more], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (cached.status !== 0) {
      process.stderr.write('could not cache the dependencies a user install gets (see above)\n');
      process.exit(cached.status ?? 1);
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
// The stamp is the cache's as it was before the run (a first run may have made the folder).
if (stamp !== undefined) {
  mkdirSync(join(STAMP, '..'), { recursive: true });
  writeFileSync(STAMP, stamp);
}
