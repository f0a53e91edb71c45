// `npm install -g rabbit-export-X.tgz` looks up each dependency's registry document, which
// `npm ci` never caches (it reads the lock). The packaging test installs `npm pack`'s tarball
// offline, as a user without a network would; this caches those documents for the locked versions
// beforehand, outside any test (npm test and .ci/run run it). With --prefer-offline a machine that
// has them already asks the registry nothing.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

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
