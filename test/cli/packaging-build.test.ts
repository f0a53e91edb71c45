import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST = join(ROOT, 'dist');

/** Every .js file under dist/ (npm test builds it first). */
async function builtFiles(): Promise<string[]> {
  const entries = await readdir(DIST, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.js'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * A preload that notes the script of each worker thread the CLI starts: worker_threads' Worker,
 * replaced before the CLI imports it (syncBuiltinESMExports hands the replacement to `import`).
 */
const WORKER_LOG = `
import { appendFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
const threads = createRequire(import.meta.url)('node:worker_threads');
const Worker = threads.Worker;
threads.Worker = class extends Worker {
  constructor(script, options) {
    appendFileSync(process.env.RABBIT_WORKER_LOG, (options?.eval ? 'eval' : String(script)) + '\\n');
    super(script, options);
  }
};
syncBuiltinESMExports();
`;

describe('the built dist/ (scripts/build.mjs)', () => {
  it('is bundled: a chunk carries several of our modules, and no source module has a file of its own', async () => {
    const files = (await builtFiles()).map((file) => relative(DIST, file));
    expect(files).toContain('cli/main.js');
    expect(files).toContain('site/view-worker.js');
    expect(files.filter((file) => file.startsWith('chunks/')).length).toBeGreaterThan(0);
    // The per-module layout tsc wrote: one file per source module, dist/site/view-pool.js among them.
    expect(files).not.toContain('site/view-pool.js');
    expect(files).not.toContain('cli/program.js');
  });

  it('finds every file it names relative to its own place: new URL(..., import.meta.url) resolves', async () => {
    const named: string[] = [];
    for (const file of await builtFiles()) {
      const text = await readFile(file, 'utf8');
      for (const [, path] of text.matchAll(/new URL\(\s*["'`]([^"'`]+)["'`]\s*,\s*import\.meta\.url\s*\)/g))
        named.push(relative(DIST, join(dirname(file), path as string)));
    }
    // The view threads' script, named from the chunk that holds src/site/view-pool.ts.
    expect(named).toContain(join('site', 'view-worker.js'));
    expect(named.filter((path) => !existsSync(join(DIST, path)))).toEqual([]);
  });

  it('starts the view threads of an export from dist/site/view-worker.js', async () => {
    const dir = await tempDir();
    const preload = join(dir, 'worker-log.mjs');
    const log = join(dir, 'workers.log');
    await writeFile(preload, WORKER_LOG);
    await writeFile(log, '');
    // The demo exports its sample account through the built CLI, views and all.
    const run = await runCli(['demo', '--out', join(dir, 'demo.zip')], {
      cwd: dir,
      env: { HOME: dir, NODE_OPTIONS: `--import=${preload}`, RABBIT_WORKER_LOG: log },
    });
    expect(run.code, run.stderr).toBe(0);
    const scripts = new Set((await readFile(log, 'utf8')).split('\n').filter(Boolean));
    expect([...scripts]).toEqual([new URL('../../dist/site/view-worker.js', import.meta.url).href]);
  });
});
