// `npm install -g rabbit-export-X.tgz` looks up each dependency's registry document, which
// `npm ci` never caches (it reads the lock). The packaging test installs `npm pack`'s tarball
// offline, as a user without a network would; this caches those documents for the locked versions
// beforehand, outside any test (npm test and .ci/run run it). With --prefer-offline a machine that
// has them already asks the registry nothing.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8'));
const specs = Object.entries(lock.packages)
  .filter(([path, entry]) => path !== '' && !entry.dev && !entry.devOptional && !entry.link)
  .map(([path, entry]) => `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${entry.version}`);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
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
