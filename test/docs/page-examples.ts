import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { BIN } from '../helpers/cli.js';
import { describeFailure, loneCommand, runBlock, shellBlocks, type DocBlock } from '../helpers/doc-examples.js';
import { tempDir } from '../helpers/temp.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BLOCK_TIMEOUT_MS = 120_000;

/**
 * The pages whose examples take longest run from test files of their own, so the two workers can share
 * them out; readme-examples.test.ts runs every other page, a page added later included. A page that
 * opens as a page there does (export.md as README.md, verify-live.md as search.md) runs there too,
 * where it starts from that page's folder (see `openings`): in a file of its own, its opening export
 * would run again.
 */
export const PAGES_WITH_A_FILE = ['docs/backups.md'];

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
    if (service) await forgetOpenings(service);
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
async function sandbox(service: FakeService): Promise<{ root: string; cwd: string; env: NodeJS.ProcessEnv }> {
  const root = await tempDir('rabbit-docs-');
  const bin = join(root, 'bin');
  const cwd = join(root, 'work');
  await mkdir(bin);
  await mkdir(cwd);
  await symlink(BIN, join(bin, 'rabbit-export'));
  return {
    root,
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

/**
 * Many pages open with the same command (`rabbit-export export --out team.zip`) against the same
 * sample account. It runs as written for the first of them; a later page that opens with it, on the
 * account unchanged since (no request but reads in between: restore's examples write), starts from
 * a copy of the folder it left, then runs the rest of its commands as written. An export of an
 * unchanged account into an empty folder leaves the same archive whichever page runs it.
 */
const openings = new WeakMap<FakeService, Map<string, { writes: number; folder: string }>>();

function writesTo(service: FakeService): number {
  let writes = 0;
  for (const [method, count] of service.stats.byMethod) if (method !== 'GET' && method !== 'HEAD') writes += count;
  return writes;
}

async function forgetOpenings(service: FakeService): Promise<void> {
  for (const { folder } of openings.get(service)?.values() ?? []) await rm(folder, { recursive: true, force: true });
  openings.delete(service);
}

/**
 * The page's first block, its opening command taken from a page before when that ran it already;
 * that command run (and its folder kept) when it is the first to.
 */
async function opened(
  service: FakeService,
  block: DocBlock,
  sandboxed: { root: string; cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ rest: DocBlock } | { failure: string } | undefined> {
  const [line = '', ...after] = block.code.split('\n');
  if (block.expectedExit !== 0 || loneCommand(line) === undefined) return undefined;
  const rest = { ...block, code: after.join('\n') };
  const seen = openings.get(service) ?? new Map<string, { writes: number; folder: string }>();
  openings.set(service, seen);
  const kept = seen.get(line);
  if (kept !== undefined && kept.writes === writesTo(service)) {
    await cp(kept.folder, sandboxed.cwd, { recursive: true });
    return { rest };
  }
  const writes = writesTo(service);
  const first = { ...block, code: line };
  const run = await runBlock(first, sandboxed.cwd, sandboxed.env, BLOCK_TIMEOUT_MS);
  if (run.timedOut || run.exitCode !== 0) return { failure: describeFailure(block, run) };
  // Kept only when the command wrote to its folder alone and the account is as it found it.
  if ((await readdir(sandboxed.root)).length === 2 && writesTo(service) === writes) {
    const folder = await mkdtemp(join(tmpdir(), 'rabbit-docs-opening-'));
    await cp(sandboxed.cwd, folder, { recursive: true });
    if (kept !== undefined) await rm(kept.folder, { recursive: true, force: true });
    seen.set(line, { writes, folder });
  }
  return { rest };
}

/** Runs a page's blocks in order in one folder; the first failure is returned, with its output. */
export async function runPage(service: FakeService, blocks: DocBlock[]): Promise<string | undefined> {
  const sandboxed = await sandbox(service);
  const { cwd, env } = sandboxed;
  let pending = blocks;
  const [head, ...others] = blocks;
  if (head !== undefined) {
    const start = await opened(service, head, sandboxed);
    if (start !== undefined && 'failure' in start) return start.failure;
    if (start !== undefined) pending = start.rest.code.trim() === '' ? others : [start.rest, ...others];
  }
  for (const block of pending) {
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
