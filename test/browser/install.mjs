// What only the browser tests need (draw.io's viewer, a browser driver: some 160 MB) lives in
// test/browser/package.json with its own lock, so that installing the tool does not fetch it. `npm test`
// runs this first: it installs them once into test/browser/node_modules, and after that does nothing,
// which keeps later runs offline.
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const mtime = (path) => {
  try {
    return statSync(new URL(path, import.meta.url)).mtimeMs;
  } catch {
    return undefined;
  }
};

// npm writes node_modules/.package-lock.json when an install completes: newer than the lock means done.
const installed = mtime('node_modules/.package-lock.json');
const wanted = Math.max(mtime('package-lock.json') ?? 0, mtime('package.json') ?? 0);
if (installed === undefined || installed < wanted) {
  process.stderr.write('installing the browser test packages into test/browser/node_modules (once)\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write('could not install test/browser/package.json (the browser tests need it); see above\n');
    process.exit(result.status ?? 1);
  }
}
