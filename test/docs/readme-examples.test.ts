import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { BIN } from '../helpers/cli.js';
import { describeFailure, runBlock, shellBlocks, type DocBlock } from '../helpers/doc-examples.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BLOCK_TIMEOUT_MS = 120_000;

/** README.md and every markdown page under docs/, as the user reads them. */
async function documents(): Promise<string[]> {
  const found: string[] = [];
  if (existsSync(join(ROOT, 'README.md'))) found.push(join(ROOT, 'README.md'));
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  await walk(join(ROOT, 'docs'));
  return found;
}

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService({ seed: 1 });
});
afterAll(async () => {
  await service.close();
});

/**
 * A folder with `rabbit-export` on PATH (the built bin, linked as `npm link` would), a home of its
 * own, and the sample account in RABBIT_BASE_URL / RABBIT_API_KEY: what the quick start leaves.
 */
async function sandbox(): Promise<{ cwd: string; env: NodeJS.ProcessEnv }> {
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
async function runPage(blocks: DocBlock[]): Promise<string | undefined> {
  const { cwd, env } = await sandbox();
  for (const block of blocks) {
    const run = await runBlock(block, cwd, env, BLOCK_TIMEOUT_MS);
    if (run.timedOut || run.exitCode !== block.expectedExit) return describeFailure(block, run);
  }
  return undefined;
}

describe('the harness, on pages of its own', () => {
  it('finds the sh blocks, leaves sh no-run and text alone, and reads the exit marker', async () => {
    const page = join(ROOT, 'test/docs/fixtures/examples.md');
    const blocks = shellBlocks(await readFile(page, 'utf8'), 'examples.md');
    expect(blocks.map((block) => [block.line, block.expectedExit])).toEqual([
      [5, 0],
      [25, 2],
      [32, 0],
    ]);
    expect(blocks.some((block) => block.code.includes('exit 9'))).toBe(false);
    expect(await runPage(blocks)).toBeUndefined();
  });

  it('fails with the block and its output when a block exits otherwise than expected', async () => {
    const page = join(ROOT, 'test/docs/fixtures/failing.md');
    const failure = await runPage(shellBlocks(await readFile(page, 'utf8'), 'failing.md'));
    expect(failure).toContain('failing.md:1: the block exited 1, expected 0');
    expect(failure).toContain('rabbit-export verify not-there.zip');
    expect(failure).toContain('not-there.zip');
  });
});

describe('every documented command runs as written', async () => {
  const pages = await documents();
  it.each(pages.map((page) => [relative(ROOT, page), page]))('%s', async (_name, page) => {
    const text = await readFile(page, 'utf8');
    const blocks = shellBlocks(text, relative(ROOT, page));
    const failure = await runPage(blocks);
    expect(failure, failure).toBeUndefined();
  });
});
