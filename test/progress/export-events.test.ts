import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backupAccount } from '../../src/backup/backup-account.js';
import { exportAccount } from '../../src/export/export-account.js';
import type { ExportEvent } from '../../src/export/events.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { costTally, type PreviousCost } from '../../src/manifest/previous-costs.js';
import { readArchiveManifest } from '../../src/archive/open-archive.js';
import { allFileEntries } from '../../src/manifest/types.js';
import { ProgressTracker } from '../../src/progress/tracker.js';
import { tempDir } from '../helpers/temp.js';
import { sampleFiles, sampleManifest, writeSampleArchive } from '../verify/sample-archive.js';
import { useFakeService } from '../helpers/fake-service.js';

/** The cost tally of a whole archive's manifest, read on its own (export --since tallies as it streams). */
async function previousCosts(archivePath: string): Promise<PreviousCost[]> {
  const tally = costTally();
  await readArchiveManifest(archivePath, tally.visitor);
  return tally.costs();
}

let service: FakeService;
useFakeService({}, (fixture) => (service = fixture.service));

async function exportWithEvents(out: string, since?: string): Promise<{ events: ExportEvent[]; listedAt: number }> {
  const events: ExportEvent[] = [];
  const tracker = new ProgressTracker(() => 0);
  let listedAt = -1;
  await exportAccount({
    out,
    baseUrl: service.baseUrl,
    keys: [service.keys.readOnly],
    ...(since ? { since } : {}),
    onEvent: (event) => {
      events.push(event);
      tracker.onEvent(event);
      if (event.type === 'prototypes-listed') listedAt = tracker.snapshot().total ?? -1;
    },
  });
  return { events, listedAt };
}

const ownerOf = (event: ExportEvent): string | undefined => {
  const source =
    event.type === 'response' || event.type === 'reused'
      ? event.source
      : event.type === 'error'
        ? event.error.source
        : '';
  return /^\/rabbit\/api\/prototypes\/(\d+)(?:\.json$|\/)/.exec(source)?.[1];
};

describe('what the export reports for progress', () => {
  it('lists the prototypes once, finishes each once after its last resource, and names every phase', async () => {
    const dir = await tempDir();
    const { events } = await exportWithEvents(join(dir, 'a.zip'));
    const listed = events.filter((event) => event.type === 'prototypes-listed');
    expect(listed).toHaveLength(1);
    const ids = listed[0]?.type === 'prototypes-listed' ? listed[0].ids : [];
    expect(ids.sort()).toEqual(['1001', '1002', '17', '3', '42']);
    for (const id of ids) {
      const done = events.findIndex((event) => event.type === 'prototype-done' && event.id === id);
      expect(events.filter((event) => event.type === 'prototype-done' && event.id === id)).toHaveLength(1);
      const last = events.findLastIndex((event) => ownerOf(event) === id);
      expect(done).toBeGreaterThan(last);
    }
    // Each prototype's pages are counted once, before its first page is fetched.
    for (const id of ids) {
      const listedPages = events.filter((event) => event.type === 'pages-listed' && event.id === id);
      expect(listedPages).toHaveLength(1);
      const count = listedPages[0]?.type === 'pages-listed' ? listedPages[0].count : -1;
      const pageMetadata = events.filter(
        (event) =>
          event.type === 'response' &&
          new RegExp(`^/rabbit/api/prototypes/${id}/pages/[^/]+\\.json$`).test(event.source),
      );
      expect(pageMetadata).toHaveLength(count);
    }
    const phases = events.flatMap((event) => (event.type === 'phase' ? [event.phase] : []));
    expect(phases).toEqual(['crawl', 'requisites', 'archive', 'done']);
  });

  it('with --since, the previous archive gives the whole exactly once the prototypes are listed', async () => {
    const dir = await tempDir();
    const first = await exportWithEvents(join(dir, 'a.zip'));
    const again = await exportWithEvents(join(dir, 'b.zip'), join(dir, 'a.zip'));
    const previous = again.events.find((event) => event.type === 'previous');
    expect(previous?.type === 'previous' && previous.prototypes.map((cost) => cost.id).sort()).toEqual([
      '1001',
      '1002',
      '17',
      '3',
      '42',
    ]);
    // Nothing changed: every prototype costs exactly what it cost last night.
    const tracker = new ProgressTracker(() => 0);
    for (const event of again.events) tracker.onEvent(event);
    const final = tracker.snapshot();
    expect(final).toMatchObject({ total: final.done, prototypesDone: 5 });
    expect(again.listedAt).toBe(final.done);
    expect(again.events.filter((event) => event.type === 'reused').length).toBeGreaterThan(150);
    // The first run had no previous archive: its estimate at the listing was a guess.
    expect(first.events.some((event) => event.type === 'previous')).toBe(false);
  });
});

describe('a backup', () => {
  it('sizes the whole from the newest archive in its folder', async () => {
    const dir = await tempDir();
    let night = Date.UTC(2026, 10, 20, 3, 15);
    const run = async (): Promise<ExportEvent[]> => {
      const events: ExportEvent[] = [];
      night += 86_400_000;
      const at = night;
      await backupAccount({
        dir,
        baseUrl: service.baseUrl,
        keys: [service.keys.readOnly],
        now: () => at,
        onEvent: (event) => events.push(event),
      });
      return events;
    };
    expect((await run()).some((event) => event.type === 'previous')).toBe(false);
    const second = await run();
    const tracker = new ProgressTracker(() => 0);
    let atListing: number | null = null;
    for (const event of second) {
      tracker.onEvent(event);
      if (event.type === 'prototypes-listed') atListing = tracker.snapshot().total;
    }
    expect(second.some((event) => event.type === 'previous')).toBe(true);
    expect(atListing).toBe(tracker.snapshot().done);
  });
});

describe('previousCosts', () => {
  it("counts each prototype's own resources and bytes under its revision, and its failures", async () => {
    const manifest = sampleManifest([
      { source: '/rabbit/api/prototypes/12/pages/page2.json', status: 500, message: 'HTTP 500' },
    ]);
    const record = manifest.prototypes['12'];
    if (!record) throw new Error('sample lost prototype 12');
    // A generated viewer copy and an entry of another prototype are not resources of 12.
    record.revisions['3']?.files.push(
      {
        path: 'prototypes/12/r3/pages/page1.view.html',
        source: 'generated',
        sha256: 'ab'.repeat(32),
        size: 999,
        contentType: 'text/html',
        lastModified: null,
      },
      {
        path: 'prototypes/12/r3/pages/odd.json',
        source: '/rabbit/api/prototypes/4711/pages/odd.json',
        sha256: 'ab'.repeat(32),
        size: 999,
        contentType: 'application/json',
        lastModified: null,
      },
    );
    const files = sampleFiles().byPrototype;
    const bytes = (id: string): number => (files[id]?.files ?? []).reduce((sum, file) => sum + file.body.length, 0);
    const archive = await writeSampleArchive(await tempDir(), { manifest });
    const costs = (await previousCosts(archive)).sort((a, b) => a.id.localeCompare(b.id));
    expect(costs).toEqual([
      { id: '12', files: 3, bytes: bytes('12'), errors: 1, revision: 3, lastModification: 1685527200000 },
      {
        id: '4711',
        files: files['4711']?.files.length,
        bytes: bytes('4711'),
        errors: 0,
        revision: 17,
        lastModification: 1685527200000,
      },
    ]);
    expect(allFileEntries(manifest).length).toBeGreaterThan(3 + (files['4711']?.files.length ?? 0));
  });

  it('reads them from an archive on disk', async () => {
    const dir = await tempDir();
    await exportWithEvents(join(dir, 'a.zip'));
    const costs = await previousCosts(join(dir, 'a.zip'));
    expect(costs).toHaveLength(5);
    for (const cost of costs) expect(cost.files).toBeGreaterThan(3);
  });
});
