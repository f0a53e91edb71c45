// `npm run build`: dist/, what bin/rabbit-export.js runs, bundled by esbuild from src/.
//
// Every spawn of the CLI used to load each of our modules as a file of its own, some 160 before an
// export's first request; Node's ES module loader spends about half a millisecond on each (resolve,
// read, compile, link) however small it is. Bundled, our code is a few dozen files. The packages stay
// outside (`packages: 'external'`): they load from node_modules through their own entry points, as
// `npm install` put them there.
//
// Code splitting keeps what loads lazily lazy: each `import()` of one of our modules is a chunk of its
// own, loaded when that import runs, and a package is imported by the chunk that needs it, so `--help`
// still loads no command's action, and an export's first request still waits for no HTML parser
// (test/cli/startup-modules.test.ts). The entry points keep the paths the rest of the repository
// starts them by: dist/cli/main.js (bin/rabbit-export.js), dist/site/view-worker.js (a view thread's
// script, found from the chunk that starts it: src/site/view-pool.ts) and the benches' modules. All
// chunks are in dist/chunks/, one folder deep like the entry points, so a path relative to
// import.meta.url reads the same from each of them.
//
// Types are checked by `npm run typecheck` (tsc), not here: esbuild only strips them, one file at a
// time, as verbatimModuleSyntax lets it. No source maps: the package ships none, and Node 20 reads
// them only with --enable-source-maps; names are kept (nothing is minified), so a stack trace
// (RABBIT_DEBUG=1) still names the functions.
//
//   node scripts/build.mjs
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Modules the benches import from dist/ by their path (bench/convert.js, bench/bare-client.js,
 * bench/zip-writer.js, bench/key-scan.js). Entry points of the same build: each is a few lines that
 * import its chunks, where bundles of their own would add some 350 KB of copies to the package. The
 * price is a chunk or two more per command line (one for `--version`, two for an export).
 */
const BENCH_MODULES = ['convert/formats/registry', 'fake-service/index', 'zip/zip-writer', 'core/secret-marker'];

/**
 * How our sources are bundled for Node, here and for the single executable (scripts/package.mjs):
 * the Node the package's engines allow, the licence comments of what is bundled kept at the end.
 */
export const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  legalComments: 'eof',
  logLevel: 'warning',
};

/** dist/ from scratch: ES modules, not minified, the packages left in node_modules. */
export async function buildDist() {
  rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
  await build({
    ...NODE_BUNDLE,
    absWorkingDir: ROOT,
    entryPoints: [
      { in: 'src/cli/main.ts', out: 'cli/main' },
      { in: 'src/site/view-worker.ts', out: 'site/view-worker' },
      ...BENCH_MODULES.map((path) => ({ in: `src/${path}.ts`, out: path })),
    ],
    outdir: 'dist',
    format: 'esm',
    // Ours only: a package is imported from node_modules, by the chunk that needs it.
    packages: 'external',
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildDist();
