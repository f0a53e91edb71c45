// What only the browser tests need (draw.io's viewer, a browser driver: some 160 MB) lives in
// test/browser/package.json with its own lock, so that installing the tool does not fetch it. `npm test`
// runs this first: it installs them once into test/browser/node_modules, and after that does nothing,
// which keeps later runs offline.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

// ReplayWeb.page, which the WACZ test replays in: only its two bundled files (ui.js, the UI, and
// sw.js, the service worker that serves the archive). Installing the package itself fails (it asks
// for a warcio this registry does not have) and would pull in Electron's updater: its tarball is
// fetched with `npm pack`, held to the integrity the registry published for it, and the two files
// taken out into node_modules/replaywebpage/.
const REPLAY = {
  spec: 'replaywebpage@2.5.3',
  integrity: 'sha512-nCj2PSON3BxeSJKE8AsYPyULv0XPZKJWfy4l9PyQre9SqwLZ+WKZVs/sfLqPOQ4GrH+0YkjbwOhr8cSTH08gsQ==',
};
const replayDir = join(dir, 'node_modules', 'replaywebpage');
if (
  mtime('node_modules/replaywebpage/sw.js') === undefined ||
  mtime('node_modules/replaywebpage/ui.js') === undefined
) {
  process.stderr.write(`fetching ReplayWeb.page's ui.js and sw.js (${REPLAY.spec}) for the WACZ test (once)\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const work = mkdtempSync(join(tmpdir(), 'replaywebpage-'));
  try {
    const packed = spawnSync(npm, ['pack', REPLAY.spec, '--pack-destination', work, '--silent'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
    if (packed.status !== 0 || tarball === undefined) {
      process.stderr.write(`could not fetch ${REPLAY.spec} with npm pack; see above\n`);
      process.exit(1);
    }
    const digest = `sha512-${createHash('sha512')
      .update(readFileSync(join(work, tarball)))
      .digest('base64')}`;
    if (digest !== REPLAY.integrity) {
      process.stderr.write(`${REPLAY.spec} does not match the integrity it was published with; not used\n`);
      process.exit(1);
    }
    mkdirSync(replayDir, { recursive: true });
    const untar = spawnSync(
      'tar',
      [
        '-xzf',
        join(work, tarball),
        '-C',
        replayDir,
        '--strip-components=1',
        'package/ui.js',
        'package/sw.js',
        'package/package.json',
      ],
      { stdio: 'inherit' },
    );
    if (untar.status !== 0) {
      process.stderr.write(`could not unpack ${tarball}; see above\n`);
      process.exit(1);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
