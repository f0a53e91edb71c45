import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';

// Files that replace a module with vi.mock: in a module graph shared with other files the mock would
// either come too late (the real module already loaded) or leak into the files after it.
const ISOLATED = ['test/api/new-kind.test.ts', 'test/client/session-users.test.ts', 'test/zip/hostile-zip.test.ts'];

/** The TypeScript settings Vite compiles our files with: the project's, and the browser code's beside it. */
const TSCONFIG_HASH = ['tsconfig.json', 'src/site/browser/tsconfig.json']
  .reduce((hash, file) => hash.update(readFileSync(new URL(file, import.meta.url))), createHash('sha256'))
  .digest('hex')
  .slice(0, 16);

const shared = {
  setupFiles: [
    'test/helpers/no-network.ts',
    'test/helpers/per-file.ts',
    // RABBIT_CPU_LOG=<file>: each test file's CPU seconds, spawned processes included, one JSON line each.
    ...(process.env['RABBIT_CPU_LOG'] ? ['test/helpers/cpu-per-file.ts'] : []),
  ],
  testTimeout: 60_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    // Two cores on every machine here: more workers only add contention.
    maxWorkers: 2,
    // Transformed modules kept on disk between runs (in node_modules, so a reinstall clears them), keyed by
    // each file's content: a second `npm test` does not transform the unchanged tree again. vitest's key
    // leaves out the tsconfig files, whose compiler options change the JavaScript a file compiles to: the
    // cache's folder is named by their hash, so a change to them starts a new one.
    experimental: { fsModuleCache: true, fsModuleCachePath: `node_modules/.vite/vitest-${TSCONFIG_HASH}` },
    projects: [
      {
        // One module graph per worker, not per file: loading and transforming our modules again for
        // each of some two hundred files was a large part of the suite's CPU.
        test: {
          ...shared,
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ISOLATED],
          isolate: false,
        },
      },
      { test: { ...shared, name: 'isolated', include: ISOLATED } },
    ],
  },
});
