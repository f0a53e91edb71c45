import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { startFakeService, type FakeService, type FakeServiceOptions } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import type { Format } from '../../src/api/resource-kinds.js';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { canonicalJson } from '../../src/restore/element-shape.js';
import type { RestoreOptions } from '../../src/restore/restore-prototype.js';
import { readArchive } from '../helpers/archive.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';

/** The ordinary sample prototype: 4 pages of 5 elements, 2 layers of 3. */
export const PROTO = '1001';

/** An archive of PROTO as it is now, JSON only unless other formats are asked for. */
export async function exportPrototype(
  service: FakeService,
  dir: string,
  name: string,
  formats: readonly Format[] = ['json'],
): Promise<string> {
  const out = join(dir, name);
  await exportAccount({
    out,
    baseUrl: service.baseUrl,
    keys: [service.keys.readOnly],
    prototypes: new Set([PROTO]),
    formats: new Set(formats),
  });
  return out;
}

/**
 * The mistake: on page0001 three elements deleted, two moved, one added; on layer1 one
 * deleted. Returns the id of the added (stray) element.
 */
export function damage(service: FakeService): string {
  const page = service.store.page(PROTO, 'page0001')!;
  const [a, b, c, d, e] = page.elements.map((element) => element.id);
  for (const id of [a!, b!, c!]) service.store.deleteElement(PROTO, 'page0001', id);
  service.store.updateElement(PROTO, 'page0001', d!, { position: { x: 1, y: 1 } });
  service.store.updateElement(PROTO, 'page0001', e!, { position: { x: 2, y: 2 } });
  const layer = service.store.layer(PROTO, 'layer1')!;
  service.store.deleteElement(PROTO, 'layer1', layer.elements[0]!.id);
  return service.store.addElement(PROTO, 'page0001', { type: 'sticker', text: 'oops' }).id;
}

/** What damagedArchiveFixture gives a test file; its fields are read inside tests and hooks, where they are set. */
export interface DamagedArchive {
  readonly service: FakeService;
  /** The test's temp folder, which holds the archive. */
  readonly dir: string;
  /** An archive of PROTO as it was before damage(). */
  readonly archive: string;
  /**
   * `restore ARCHIVE --prototype PROTO [--json] ...args`, in-process, with the service's read-write
   * key, in `cwd` if one is given.
   */
  restore(args?: string[], options?: { json?: boolean; cwd?: string }): Promise<CliRun>;
}

/**
 * For each test: a fake service and a temp folder, an archive of PROTO named `name` exported into
 * it, then the service damaged (see damage) and its request counts reset, so that a test counts
 * only the requests of what it runs. Called at the top of a test file, for the reason
 * servicesClosedAfterEach gives; a file's own beforeEach hooks run after these.
 */
export function damagedArchiveFixture({ name = 'a.zip' }: { name?: string } = {}): DamagedArchive {
  let service!: FakeService;
  let dir!: string;
  let archive!: string;
  useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));
  beforeEach(async () => {
    archive = await exportPrototype(service, dir, name);
    damage(service);
    service.stats.reset();
  });
  return {
    get service() {
      return service;
    },
    get dir() {
      return dir;
    },
    get archive() {
      return archive;
    },
    restore: (args = [], { json = false, cwd } = {}) =>
      runCli(['restore', archive, '--prototype', PROTO, ...(json ? ['--json'] : []), ...args], {
        register: registerRestore,
        env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
        ...(cwd !== undefined ? { cwd } : {}),
      }),
  };
}

/** Parent id -> its elements (id and attributes as canonical JSON), from an archive. */
export async function archivedElements(path: string): Promise<Map<string, Array<{ id: string; content: string }>>> {
  const { entries } = await readArchive(path);
  const out = new Map<string, Array<{ id: string; content: string }>>();
  for (const [name, { data }] of entries) {
    const match = new RegExp(
      `^prototypes/${PROTO}/r\\d+/(?:pages|layers)/((?:page|layer)\\d+)/elements/(element\\d+)\\.json$`,
    ).exec(name);
    if (!match) continue;
    const { id, ...attributes } = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
    const list = out.get(match[1]!) ?? [];
    list.push({ id: String(id), content: canonicalJson(attributes) });
    out.set(match[1]!, list);
  }
  return out;
}

/** Parent id -> sorted contents (ids aside). */
export function contents(elements: Map<string, Array<{ id: string; content: string }>>): Record<string, string[]> {
  return Object.fromEntries([...elements].map(([parent, list]) => [parent, list.map((e) => e.content).sort()]));
}

/** The live elements of PROTO the same way, read from the store. */
export function liveContents(service: FakeService): Record<string, string[]> {
  const proto = service.store.prototype(PROTO)!;
  const out: Record<string, string[]> = {};
  for (const parent of [...proto.pages, ...proto.layers]) {
    if (parent.elements.length === 0) continue;
    out[parent.id] = parent.elements.map(({ id: _id, ...attributes }) => canonicalJson(attributes)).sort();
  }
  return out;
}

/**
 * A restore of PROTO from `archive` with the service's read-write key and --prune, retrying at
 * once with no jitter; `extra` adds or overrides what a test is about.
 */
export function restoreOptions(
  service: FakeService,
  archive: string,
  extra: Partial<RestoreOptions> = {},
): RestoreOptions {
  return {
    archive,
    prototype: PROTO,
    baseUrl: service.baseUrl,
    keys: [service.keys.readWrite],
    prune: true,
    retry: { baseDelayMs: 1 },
    random: () => 0.5,
    ...extra,
  };
}

/**
 * Starts fake services for a file's tests, each closed after the test that started it. Called at
 * the top of a test file: the hook is registered for that file (files share their modules, so a
 * hook at this module's top would only ever be registered for the first file that imports it).
 */
export function servicesClosedAfterEach(): (options?: FakeServiceOptions) => Promise<FakeService> {
  const services: FakeService[] = [];
  afterEach(async () => {
    for (const service of services.splice(0)) await service.close();
  });
  return async (options = {}) => {
    const service = await startFakeService({ seed: 1, ...options });
    services.push(service);
    return service;
  };
}

/** A clock that moves only when the code under test sleeps: no test that uses it waits for real. */
export function fakeClock(): { now: () => number; sleep: (ms: number, signal: AbortSignal) => Promise<void> } {
  let clock = Date.UTC(2026, 0, 1);
  return {
    now: () => clock,
    sleep: (ms, signal) => {
      if (signal.aborted) return Promise.reject(signal.reason);
      clock += ms;
      return new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/** A refusal as a command's --json summary gives it: its code, message and next step. */
export interface Refusal {
  code: string;
  message: string;
  next?: string;
}

/** The refusal in the --json summary, the last line of `stdout`. */
export const errorOf = (stdout: string): Refusal =>
  (JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { error: Refusal }).error;

/** A file's SHA-256, to show it was left as it was. */
export const sha256 = async (path: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
