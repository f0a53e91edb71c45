import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService, type FakeServiceOptions } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { checkAgainstLive, type LiveCheckOptions } from '../../src/live-check/check-live.js';
import { liveVerdict, type Difference, type LiveCheckReport } from '../../src/live-check/live-report.js';
import { tempDir } from '../helpers/temp.js';

// issue 38: verify --against-live tells whether an archive still holds what the service serves.

const services: FakeService[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.close();
});

async function serve(options: FakeServiceOptions = {}): Promise<FakeService> {
  const service = await startFakeService({ seed: 5, ...options });
  services.push(service);
  return service;
}

async function exported(service: FakeService): Promise<string> {
  const out = join(await tempDir(), 'team.zip');
  const result = await exportAccount({ baseUrl: service.baseUrl, keys: [service.keys.readOnly], out });
  expect(result.complete).toBe(true);
  return out;
}

function check(
  service: FakeService,
  archive: string,
  options: Partial<LiveCheckOptions> = {},
): Promise<LiveCheckReport> {
  return checkAgainstLive({ archive, baseUrl: service.baseUrl, keys: [service.keys.readOnly], seed: 7, ...options });
}

/** A difference as the test names it: status, kind, prototype, id (and the parent or format when there is one). */
const named = (d: Difference): string =>
  [d.status, d.kind, d.prototype ?? '-', d.id, d.parent ?? d.format ?? ''].join(' ').trim();

/** The same four edits each test makes: an element, a page's name, a new discussion, a prototype deleted. */
function edit(service: FakeService): {
  prototype: string;
  page: string;
  renamed: string;
  element: string;
  discussion: number;
} {
  const store = service.store;
  const prototype = '1001';
  const proto = store.prototype(prototype);
  const [first, second] = proto?.pages ?? [];
  const element = first?.elements[0]?.id;
  if (!first || !second || !element) throw new Error('the sample prototype has no two pages with elements');
  store.updateElement(prototype, first.id, element, {
    position: { x: 3, y: 4 },
    dimensions: { width: 40, height: 30 },
  });
  store.renamePage(prototype, second.id, 'Renamed page');
  const discussion = store.addDiscussion(prototype, second.id, 'A new thread', 'Ada');
  store.deletePrototype('1002');
  return { prototype, page: first.id, renamed: second.id, element, discussion };
}

describe('verify --against-live', () => {
  it('an untouched service matches everything: exit 0, every list and resource checked', async () => {
    const service = await serve();
    const archive = await exported(service);
    const report = await check(service, archive);
    expect(report.differences).toEqual([]);
    expect(report.failureCount).toBe(0);
    expect(report.complete).toBe(true);
    expect(report.sampled).toBe(report.population);
    expect(report.sampledChecked).toBe(report.population);
    expect(report.lists.checked).toBe(report.lists.total);
    expect(report.share).toBe(1);
    expect(liveVerdict(report)).toBe('match');
    expect(report.byKind.element?.matched).toBeGreaterThan(10);
  }, 60_000);

  it('reports exactly the edited element, renamed page, added discussion and deleted prototype at --sample 100%', async () => {
    const service = await serve();
    const archive = await exported(service);
    const before = service.store.head('1001')?.milestones.length ?? 0;
    const { prototype, page, renamed, element, discussion } = edit(service);
    const report = await check(service, archive, { sample: { percent: 100 } });
    expect(report.differences.map(named).sort()).toEqual(
      [
        'gone prototype 1002 1002',
        `changed prototype ${prototype} ${prototype}`,
        `changed element ${prototype} ${element} ${page}`,
        `changed rendering ${prototype} ${page} html`,
        `changed rendering ${prototype} ${page} png`,
        `changed page ${prototype} ${renamed}`,
        `changed rendering ${prototype} ${renamed} html`,
        `new discussion ${prototype} ${discussion}`,
      ].sort(),
    );
    const changed = report.differences.find((d) => d.kind === 'element');
    expect(changed).toMatchObject({ archivedRevision: before, liveRevision: before + 3 });
    expect(report.byPrototype[prototype]).toMatchObject({ archivedRevision: before, liveRevision: before + 3 });
    expect(report.byKind.discussion).toMatchObject({ new: 1 });
    expect(liveVerdict(report)).toBe('drift');
  }, 60_000);
});
