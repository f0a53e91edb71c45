import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { diffArchives, itemOf, type ArchiveDiff } from '../../src/diff/diff-archives.js';
import { registerDiff } from '../../src/cli/commands/diff.js';
import { manifestOf } from '../helpers/archive.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';

let service: FakeService;
let dir: string;

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

const run = async (out: string) => {
  const result = await exportAccount({
    out: join(dir, out),
    baseUrl: service.baseUrl,
    keys: [service.keys.readOnly],
    concurrency: 4,
  });
  return { ...result, manifest: await manifestOf(result.out) };
};

const none = { added: [], removed: [], changed: [] };

describe('diff', () => {
  it('reports exactly the changes made, and counts the rest', async () => {
    const a = await run('a.zip');
    const store = service.store;
    const page = store.prototype(3)?.pages[0];
    const element = page?.elements[1];
    if (!page || !element) throw new Error('sample data changed');
    store.updateElement(3, page.id, element.id, { position: { x: 999, y: 7 } });
    const newPage = store.addPage(1001, 'Checkout');
    const discussion = store.prototype(1002)?.discussions[0];
    if (!discussion) throw new Error('prototype 1002 has no discussion');
    store.addDiscussionEntry(1002, discussion.id, 'Ada', 'looks good');
    store.deletePrototype(42);
    const added = store.addPrototype('Fresh');
    const b = await run('b.zip');

    const diff = await diffArchives(join(dir, 'a.zip'), join(dir, 'b.zip'));
    const rev = (id: string, m: typeof a.manifest) => m.prototypes[id]?.revision;
    expect(diff.added).toEqual([{ id: String(added), name: 'Fresh', revision: rev(String(added), b.manifest) }]);
    expect(diff.removed).toEqual([
      { id: '42', name: a.manifest.prototypes['42']?.name, revision: rev('42', a.manifest) },
    ]);
    expect(diff.unreadable).toEqual([]);
    expect(diff.unchanged).toBe(1);
    const changed = Object.fromEntries(diff.changed.map((c) => [c.id, c]));
    expect(Object.keys(changed)).toEqual(['3', '1001', '1002']);

    expect(changed['3']?.fromRevision).toBe(rev('3', a.manifest));
    expect(changed['3']?.revision).toBe(rev('3', b.manifest));
    expect(changed['3']?.changes).toEqual({
      pages: none,
      layers: none,
      elements: { ...none, changed: [`${page.id}/${element.id}`] },
      discussions: none,
      // The moved element shows on its page's renderings, and nowhere else.
      renderings: { ...none, changed: [`${page.id}.html`, `${page.id}.png`] },
      lists: none,
      // The new revision is in the prototype's own metadata.
      metadata: { ...none, changed: ['prototype'] },
      other: none,
    });
    expect(changed['3']?.counts).toEqual({
      elements: { added: 0, removed: 0, changed: 1 },
      renderings: { added: 0, removed: 0, changed: 2 },
      metadata: { added: 0, removed: 0, changed: 1 },
    });
    expect(changed['1001']?.changes).toEqual({
      pages: { ...none, added: [newPage] },
      layers: none,
      elements: none,
      discussions: none,
      renderings: { ...none, added: [`${newPage}.html`, `${newPage}.png`] },
      lists: {
        ...none,
        added: [`pages/${newPage}/discussions.json`, `pages/${newPage}/elements.json`],
        changed: ['pages.json'],
      },
      metadata: { ...none, changed: ['prototype'] },
      other: none,
    });
    expect(changed['1002']?.changes).toEqual({
      pages: none,
      layers: none,
      elements: none,
      discussions: { ...none, changed: [String(discussion.id)] },
      renderings: none,
      lists: none,
      metadata: { ...none, changed: ['prototype'] },
      other: none,
    });
    for (const change of diff.changed) expect(change.incomplete).toBe(false);
    // A prototype too big to compare at once is compared a bucket of sources at a time: the same answer.
    expect(await diffArchives(join(dir, 'a.zip'), join(dir, 'b.zip'), { compareLines: 3 })).toEqual(diff);
  });

  it('finds nothing between two exports of the same state', async () => {
    await run('a.zip');
    await run('b.zip');
    const diff = await diffArchives(join(dir, 'a.zip'), join(dir, 'b.zip'));
    expect(diff).toMatchObject({
      added: [],
      removed: [],
      changed: [],
      unreadable: [],
      unchanged: service.store.prototypeIds().length,
    });
  });

  it('tells a prototype B could not read from one that was removed', async () => {
    await run('a.zip');
    service.setFaults({ paths: [{ path: '/rabbit/api/prototypes/1002.json', kind: '404' }] });
    await run('b.zip');
    const diff = await diffArchives(join(dir, 'a.zip'), join(dir, 'b.zip'));
    expect(diff.removed).toEqual([]);
    expect(diff.unreadable.map((p) => p.id)).toEqual(['1002']);
  });

  it.each([
    ['pages/page0001.json', { category: 'pages', id: 'page0001' }],
    ['pages/page0001.png', { category: 'renderings', id: 'page0001.png' }],
    ['pages/page0001/elements/element7.json', { category: 'elements', id: 'page0001/element7' }],
    ['layers/layer2/elements/element7.json', { category: 'elements', id: 'layer2/element7' }],
    ['layers/layer2.json', { category: 'layers', id: 'layer2' }],
    ['discussions/12.json', { category: 'discussions', id: '12' }],
    ['pages.json', undefined],
    ['pages/page0001/elements.json', undefined],
    ['pages/page0001/discussions.json', undefined],
  ])('classifies %s', (rest, expected) => {
    expect(itemOf(rest)).toEqual(expected);
  });

  it('prints a table or one JSON line, exit code 0 either way', async () => {
    await run('a.zip');
    service.store.renamePrototype(17, 'Renamed\u202e');
    await run('b.zip');
    const table = await runCli(['diff', join(dir, 'a.zip'), join(dir, 'b.zip')], { register: registerDiff });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/~ prototype 17 "Renamed<U\+202E>" \(was .*\) r\d+ -> r\d+/);
    expect(table.stdout).toMatch(/0 added, 0 removed, 1 changed, 4 unchanged/);
    const json = await runCli(['diff', join(dir, 'a.zip'), join(dir, 'b.zip'), '--json'], { register: registerDiff });
    expect(json.code).toBe(0);
    expect(json.stdout.trim().split('\n')).toHaveLength(1);
    const parsed = JSON.parse(json.stdout) as ArchiveDiff;
    expect(parsed.changed.map((c) => c.id)).toEqual(['17']);
    const missing = await runCli(['diff', join(dir, 'a.zip'), join(dir, 'nope.zip')], { register: registerDiff });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nope\.zip does not exist/);
  });
});
