import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { BIN } from '../helpers/cli.js';
import { describeFailure, runBlock, shellBlocks, type DocBlock } from '../helpers/doc-examples.js';
import { tempDir } from '../helpers/temp.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BLOCK_TIMEOUT_MS = 120_000;

/**
 * The pages whose examples take longest run from test files of their own, so the two workers can share
 * them out; readme-examples.test.ts runs every other page, a page added later included.
 */
export const PAGES_WITH_A_FILE = ['README.md', 'docs/export.md', 'docs/backups.md', 'docs/verify-live.md'];

/** README.md and every markdown page under docs/, as the user reads them, relative to the repository. */
export async function documents(): Promise<string[]> {
  const found: string[] = [];
  if (existsSync(join(ROOT, 'README.md'))) found.push('README.md');
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.name.endsWith('.md')) found.push(relative(ROOT, path));
    }
  };
  await walk(join(ROOT, 'docs'));
  return found;
}

/** The sample account the examples talk to, started before the file's tests and closed after them. */
export function sampleService(): () => FakeService {
  let service: FakeService | undefined;
  beforeAll(async () => {
    service = await startFakeService({ seed: 1 });
  });
  afterAll(async () => {
    await service?.close();
  });
  return () => {
    if (!service) throw new Error('the sample service has not started');
    return service;
  };
}

/**
 * A folder with `rabbit-export` on PATH (the built bin, linked as `npm link` would), a home of its
 * own, and the sample account in RABBIT_BASE_URL / RABBIT_API_KEY: what the quick start leaves.
 */
async function sandbox(service: FakeService): Promise<{ cwd: string; env: NodeJS.ProcessEnv }> {
  const root = await tempDir('rabbit-docs-');
  const bin = join(root, 'bin');
  const cwd = join(root, 'work');
  await mkdir(bin);
  await mkdir(cwd);
  await symlink(BIN, join(bin, 'rabbit-export'));
  return {
    cwd,
    env: {
      PATH: `${bin}:${process.env['PATH'] ?? ''}`,
      HOME: root,
      LANG: 'C.UTF-8',
      RABBIT_BASE_URL: service.baseUrl,
      // The read-write key: restore's examples write back to the sample account.
      RABBIT_API_KEY: service.keys.readWrite,
    },
  };
}

/** Runs a page's blocks in order in one folder; the first failure is returned, with its output. */
export async function runPage(service: FakeService, blocks: DocBlock[]): Promise<string | undefined> {
  const { cwd, env } = await sandbox(service);
  for (const block of blocks) {
    const run = await runBlock(block, cwd, env, BLOCK_TIMEOUT_MS);
    if (run.timedOut || run.exitCode !== block.expectedExit) return describeFailure(block, run);
  }
  return undefined;
}

/** One test per page: every `sh` block of it runs as written, in order, against the sample account. */
export function pageRunsAsWritten(service: () => FakeService, page: string): void {
  it(page, async () => {
    const blocks = shellBlocks(await readFile(join(ROOT, page), 'utf8'), page);
    const failure = await runPage(service(), blocks);
    expect(failure, failure).toBeUndefined();
  });
}
