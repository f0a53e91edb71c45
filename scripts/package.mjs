// `npm run package`: rabbit-export as one executable file for the platform it runs on, with its
// checksum, the way restic or rclone ship: no Node, no node_modules, nothing else to install.
//
// It is Node's own single executable application: the CLI bundled by esbuild into one CommonJS
// script (Node 20 runs only CommonJS as the embedded main), prepared as a blob by this very node,
// and injected with postject into a copy of this node. So the binary is for the platform and the
// Node version that build it; .github/workflows/release.yml runs this on one runner per platform.
//
//   node scripts/package.mjs [--out DIR]   (default: release/)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import postject from 'postject';
import { bundleBrowser } from './bundle-browser.mjs';
import { NODE_BUNDLE } from './build.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// The sentinel Node's own build looks for to find an injected blob (Node's SEA documentation).
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const OS_NAMES = { linux: 'linux', darwin: 'macos', win32: 'windows' };

function fail(message) {
  process.stderr.write(`package: ${message}\n`);
  process.exit(1);
}

function run(command, args) {
  const result = spawnSync(command, args, { stdio: 'inherit' });
  if (result.status !== 0) fail(`${command} ${args.join(' ')} failed (${result.error?.message ?? result.status})`);
}

const outFlag = process.argv.indexOf('--out');
const outDir = resolve(ROOT, outFlag > 0 ? process.argv[outFlag + 1] : 'release');
const os = OS_NAMES[process.platform] ?? fail(`no single executable for ${process.platform}`);
const binary = join(outDir, `rabbit-export-${os}-${process.arch}${process.platform === 'win32' ? '.exe' : ''}`);
const work = mkdtempSync(join(tmpdir(), 'rabbit-package-'));

try {
  // One CommonJS file each, for Node 20. Whitespace and syntax only are minified: names stay, so a
  // stack trace (RABBIT_DEBUG=1) still reads.
  const bundleOf = (entry, outfile, extra = {}) =>
    build({
      ...NODE_BUNDLE,
      entryPoints: [join(ROOT, entry)],
      outfile,
      format: 'cjs',
      minifyWhitespace: true,
      minifySyntax: true,
      ...extra,
    });
  // The search box's script is a string in the sources, bundled from its own TypeScript: checked
  // here, as `npm run build` does, so the executable never carries a stale one. Not rewritten:
  // that would heal the working copy, and a commit of search-box.ts alone would go unnoticed.
  if (!(await bundleBrowser({ check: true })))
    throw new Error('src/site/search-box.generated.ts is not the bundle of its TypeScript: run npm run bundle first');
  const bundle = join(work, 'rabbit-export.cjs');
  await bundleOf('src/cli/main.ts', bundle, {
    // pdfkit's ES module build finds its own files from import.meta.url, which a CommonJS bundle lacks.
    define: { 'import.meta.url': '__bundleUrl' },
    banner: { js: "var __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  });
  // The page views' worker thread (src/site/view-worker.ts) as a bundle of its own, carried as an
  // asset of the executable and started from its text: a single file has no script beside it.
  const viewWorker = join(work, 'view-worker.cjs');
  await bundleOf('src/site/view-worker.ts', viewWorker);

  const blob = join(work, 'sea-prep.blob');
  const config = join(work, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify({
      main: bundle,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      assets: {
        'view-worker.cjs': viewWorker,
        // The font every PDF binder draws with first (src/convert/pdf/bundled-fonts.ts, which reads
        // them by these names): a machine without fonts, or without fontconfig, still gets binders.
        ...Object.fromEntries(
          ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'].map((name) => [
            name,
            createRequire(import.meta.url).resolve(`dejavu-fonts-ttf/ttf/${name}`),
          ]),
        ),
      },
    }),
  );
  run(process.execPath, ['--experimental-sea-config', config]);

  mkdirSync(outDir, { recursive: true });
  rmSync(binary, { force: true });
  copyFileSync(process.execPath, binary);
  chmodSync(binary, 0o755);
  // macOS refuses to run a changed binary under its old signature: remove it, then sign ad hoc.
  if (process.platform === 'darwin') run('codesign', ['--remove-signature', binary]);
  await postject.inject(binary, 'NODE_SEA_BLOB', readFileSync(blob), {
    sentinelFuse: SEA_FUSE,
    ...(process.platform === 'darwin' ? { machoSegmentName: 'NODE_SEA' } : {}),
  });
  if (process.platform === 'darwin') run('codesign', ['--sign', '-', binary]);

  // sha256sum's format, so `sha256sum -c` (or `shasum -a 256 -c`) checks it beside the binary.
  const digest = createHash('sha256').update(readFileSync(binary)).digest('hex');
  writeFileSync(`${binary}.sha256`, `${digest}  ${basename(binary)}\n`);
  process.stdout.write(`${binary}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
