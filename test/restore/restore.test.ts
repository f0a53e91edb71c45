import { beforeEach, describe, expect, it } from 'vitest';
import { writeRequests, type FakeService } from '../../src/fake-service/index.js';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { runCli } from '../helpers/cli.js';
import { PROTO, archivedElements, contents, damage, exportPrototype, liveContents } from './restore-helpers.js';
import { skippingClock } from '../helpers/skipping-clock.js';
import { useFakeService } from '../helpers/fake-service.js';

let service: FakeService;
let dir: string;
let archive: string;
let env: NodeJS.ProcessEnv;

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));
beforeEach(async () => {
  archive = await exportPrototype(service, dir, 'night.zip');
  env = { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl };
});

interface Summary {
  ok: boolean;
  exitCode: number;
  dryRun: boolean;
  create: number;
  update: number;
  delete: number;
  unchanged: number;
  skipped: unknown[];
  idMap: Record<string, string>;
  strays: Array<{ parent: string; id: string }>;
  error?: { code: string; message: string };
}

async function restore(
  ...args: string[]
): Promise<{ code: number | null; summary: Summary; stdout: string; stderr: string }> {
  const run = await runCli(['restore', archive, '--prototype', PROTO, '--json', ...args], {
    register: registerRestore,
    env,
  });
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return { code: run.code, summary: JSON.parse(lines[0]!) as Summary, stdout: run.stdout, stderr: run.stderr };
}

describe('rabbit-export restore', () => {
  it('reads a service that compresses its answers as it reads a plain one', async () => {
    damage(service);
    const plain = await restore('--dry-run');
    service.setCompression({ when: 'always', codings: ['gzip', 'br'] });
    const compressed = await restore('--dry-run');
    expect(compressed.code).toBe(0);
    const plan = (summary: Summary): Partial<Summary> => ({
      create: summary.create,
      update: summary.update,
      delete: summary.delete,
      unchanged: summary.unchanged,
      skipped: summary.skipped,
    });
    expect(plan(compressed.summary)).toEqual(plan(plain.summary));
    expect(plain.summary).toMatchObject({ ok: true, create: 4, update: 2 });
  });

  it('plans 4 creates, 2 updates, 0 deletes; --prune applies them and deletes the stray; a second run writes nothing', async () => {
    const stray = damage(service);
    const archived = await archivedElements(archive);
    service.stats.reset();

    const dry = await restore('--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.summary).toMatchObject({
      ok: true,
      exitCode: 0,
      dryRun: true,
      create: 4,
      update: 2,
      delete: 0,
      skipped: [],
      idMap: {},
    });
    expect(dry.summary.strays).toEqual([{ parent: 'page0001', id: stray }]);
    // The plan is printed (on stderr with --json): counts first, then each element.
    expect(dry.stderr).toMatch(/^restore plan for prototype 1001 .*4 to create, 2 to update, 0 to delete/);
    expect(dry.stderr).toMatch(/page0001: update element\d+: position/);
    expect(writeRequests(service.stats)).toBe(0);
    expect(service.stats.requests).toBeGreaterThan(0);

    service.stats.reset();
    const applied = await restore('--prune');
    expect(applied.code).toBe(0);
    expect(applied.summary).toMatchObject({ ok: true, dryRun: false, create: 4, update: 2, delete: 1, skipped: [] });
    expect(Object.keys(applied.summary.idMap)).toHaveLength(4);
    expect(service.stats.byMethod.get('POST')).toBe(4);
    expect(service.stats.byMethod.get('PUT')).toBe(2);
    expect(service.stats.byMethod.get('DELETE')).toBe(1);
    expect(service.store.element(PROTO, 'page0001', stray)).toBeUndefined();
    // The plan came out before the first write.
    expect(applied.stderr.indexOf('restore plan')).toBeLessThan(applied.stderr.indexOf('created '));

    // A fresh export of the prototype holds the archived elements again, ids aside for re-created ones.
    const fresh = await archivedElements(await exportPrototype(service, dir, 'after.zip'));
    expect(contents(fresh)).toEqual(contents(archived));
    for (const [parent, list] of archived) {
      const freshIds = new Set(fresh.get(parent)!.map((e) => e.id));
      for (const { id } of list) expect(freshIds.has(applied.summary.idMap[id] ?? id), `${parent}/${id}`).toBe(true);
    }
    // The rendering follows: the page shows the re-created elements under their new ids.
    const html = await (
      await fetch(
        `${service.baseUrl}/rabbit/api/prototypes/${PROTO}/pages/page0001.html?api_key=${service.keys.readOnly}`,
      )
    ).text();
    const onPage = Object.values(applied.summary.idMap).filter((newId) =>
      service.store.element(PROTO, 'page0001', newId),
    );
    expect(onPage.length).toBeGreaterThan(0);
    expect(onPage.filter((newId) => !html.includes(`id="${newId}"`))).toEqual([]);

    service.stats.reset();
    const again = await restore('--prune');
    expect(again.code).toBe(0);
    expect(again.summary).toMatchObject({ create: 0, update: 0, delete: 0 });
    expect(again.summary.idMap).toEqual(applied.summary.idMap);
    expect(writeRequests(service.stats)).toBe(0);
  });

  it('finds a restored element by content even without the journal', async () => {
    damage(service);
    const first = await restore('--journal', `${dir}/one.jsonl`);
    expect(first.summary).toMatchObject({ create: 4, update: 2, delete: 0 });
    service.stats.reset();
    const second = await restore('--journal', `${dir}/other.jsonl`);
    expect(second.summary).toMatchObject({ create: 0, update: 0, delete: 0, idMap: first.summary.idMap });
    expect(writeRequests(service.stats)).toBe(0);
  });

  it('a read-only key exits 1 at the first write, says so, and writes nothing', async () => {
    damage(service);
    const before = liveContents(service);
    const lastModification = service.store.prototype(PROTO)!.lastModification;
    service.stats.reset();
    env = { ...env, RABBIT_API_KEY: service.keys.readOnly };
    const run = await restore('--prune');
    expect(run.code).toBe(1);
    expect(run.summary).toMatchObject({
      ok: false,
      exitCode: 1,
      create: 0,
      update: 0,
      delete: 0,
      error: { code: 'KEY_REFUSED' },
    });
    expect(run.stderr).toMatch(/read-only/);
    expect(writeRequests(service.stats)).toBe(1);
    expect(service.stats.statuses.get(403)).toBe(1);
    expect(liveContents(service)).toEqual(before);
    expect(service.store.prototype(PROTO)!.lastModification).toBe(lastModification);
    expect(run.stdout + run.stderr).not.toContain(service.keys.readOnly);
  });

  it('rides out 429 and 503 answers to its reads', async () => {
    damage(service);
    const page = `/rabbit/api/prototypes/${PROTO}/pages/page0001/elements.json`;
    const kept = service.store.page(PROTO, 'page0001')!.elements[0]!.id;
    service.setFaults({
      paths: [
        { path: page, kind: '429', times: 1 },
        { path: `/rabbit/api/prototypes/${PROTO}/pages/page0001/elements/${kept}.json`, kind: '503', times: 1 },
      ],
    });
    // The second each answer asks to wait (Retry-After) passes on the run's clock, which skips it.
    const clock = skippingClock();
    const run = await runCli(['restore', archive, '--prototype', PROTO, '--json', '--page', 'page0001'], {
      register: registerRestore,
      env,
      clock,
    });
    expect(JSON.parse(run.stdout)).toMatchObject({ exitCode: 0, create: 3, update: 2 });
    // Both were waited out, on that clock.
    expect(clock.slept.length).toBeGreaterThanOrEqual(2);
    expect(contents(await archivedElements(archive))['page0001']).toEqual(
      liveContents(service)['page0001']!.filter((c) => !c.includes('sticker')),
    );
  });

  it('a page that no longer exists is reported and skipped: exit 3', async () => {
    service.store.prototype(PROTO)!.pages.splice(3, 1);
    const run = await restore();
    expect(run.code).toBe(3);
    expect(run.summary.skipped).toEqual([
      { parent: 'page0004', reason: expect.stringMatching(/no longer exists/) as unknown },
    ]);
  });

  it('an element an incomplete archive lacks is skipped and its live copy kept, even with --prune: exit 3', async () => {
    const missing = service.store.page(PROTO, 'page0002')!.elements[1]!.id;
    service.setFaults({
      paths: [{ path: `/rabbit/api/prototypes/${PROTO}/pages/page0002/elements/${missing}.json`, kind: '404' }],
    });
    archive = await exportPrototype(service, dir, 'partial.zip');
    service.setFaults(undefined);
    service.stats.reset();
    const run = await restore('--prune');
    expect(run.code).toBe(3);
    expect(run.summary.skipped).toEqual([
      { parent: 'page0002', element: missing, reason: expect.stringMatching(/does not hold/) as unknown },
    ]);
    expect(service.store.element(PROTO, 'page0002', missing)).toBeDefined();
    expect(writeRequests(service.stats)).toBe(0);
  });

  it('usage errors exit 2 before any request', async () => {
    service.stats.reset();
    for (const args of [
      ['--page', '../x'],
      ['--page', 'page999'],
    ]) {
      const run = await runCli(['restore', archive, '--prototype', PROTO, ...args], { register: registerRestore, env });
      expect(run.code, args.join(' ')).toBe(2);
    }
    expect((await runCli(['restore', archive, '--prototype', '17'], { register: registerRestore, env })).code).toBe(2);
    expect((await runCli(['restore', archive], { register: registerRestore, env })).code).toBe(2);
    expect(service.stats.requests).toBe(0);
  });

  it('a prototype deleted on the service exits 1', async () => {
    service.store.deletePrototype(PROTO);
    const run = await restore();
    expect(run.code).toBe(1);
    expect(writeRequests(service.stats)).toBe(0);
  });
});
