import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSearch } from '../../src/cli/commands/search.js';
import type { SearchHit, SearchSummary } from '../../src/search/search-archive.js';
import { runCli } from '../helpers/cli.js';
import { LAYER, PAGE, searchArchives } from './search-archive-fixture.js';

// What `search --json` prints is the command's own hit and summary, one record each (docs/json.md).
type Hit = SearchHit;
type Summary = SearchSummary;

let dir: string;
let archive: string;
let old: string;

beforeAll(async () => {
  // Not tempDir(): that one is emptied after each test, and every test reads these archives.
  dir = await mkdtemp(join(tmpdir(), 'rabbit-search-'));
  ({ archive, old } = await searchArchives(dir));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const search = (args: string[]) => runCli(['search', ...args], { register: registerSearch });

async function json(file: string, ...args: string[]): Promise<{ hits: Hit[]; summary: Summary; lines: string[] }> {
  const result = await search([file, ...args, '--json']);
  expect(result.code).toBe(0);
  const lines = result.stdout.trimEnd().split('\n');
  const values = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  // One record per hit, the summary last and only there; each with the envelope of every record.
  expect(values.slice(0, -1).every((v) => v['type'] === 'hit')).toBe(true);
  expect(values.at(-1)).toMatchObject({ type: 'summary', schemaVersion: 1, command: 'search', ok: true, exitCode: 0 });
  const fields = ({ type: _t, schemaVersion: _v, command: _c, ...rest }: Record<string, unknown>) => rest;
  const { ok: _ok, exitCode: _code, ...summary } = fields(values.at(-1) ?? {});
  expect(summary['hits']).toBe(values.length - 1);
  return {
    hits: values.slice(0, -1).map((v) => fields(v) as unknown as Hit),
    summary: summary as unknown as Summary,
    lines,
  };
}

describe('rabbit-export search', () => {
  it('ignores case and accents, and marks the match as written', async () => {
    for (const query of ['uber', 'ÜBER', 'Über', 'ubeR']) {
      const { hits } = await json(archive, query);
      expect(hits).toEqual([
        expect.objectContaining({
          kind: 'page',
          page: { id: PAGE, name: 'Start – Übersicht 🏠' },
          before: 'Start – ',
          match: 'Über',
          after: 'sicht 🏠',
          target: expect.stringMatching(new RegExp(`^prototypes/3/r\\d+/pages/${PAGE}\\.view\\.html$`)),
        }),
      ]);
    }
    // Greek without its tonos and in capitals; Cyrillic Ё as Е.
    const greek = (await json(archive, 'ΚΑΛΑΘΙ')).hits;
    expect(greek.map((h) => [h.kind, h.match, h.after])).toEqual([['element', 'Καλάθι', ' αγορών']]);
    const cyrillic = (await json(archive, 'елку')).hits;
    expect(cyrillic.map((h) => [h.before, h.match])).toEqual([['Оплатить ', 'Ёлку']]);
    // The discussion titled Ünïcödé and the entry that set it.
    const discussion = (await json(archive, 'UNICODE')).hits;
    expect(discussion.map((h) => [h.kind, h.field, h.id, h.match])).toEqual([
      ['discussion', 'title', '3', 'Ünïcödé'],
      ['discussion', 'entry', '3', 'Ünïcödé'],
    ]);
  });

  it('finds CJK text inside a longer run, with no spaces to split on', async () => {
    const inElement = (await json(archive, '支払い')).hits;
    expect(inElement.map((h) => [h.kind, h.prototype.id, h.page?.id, h.before, h.match, h.after])).toEqual([
      ['element', '3', PAGE, 'お', '支払い', '方法を選択'],
    ]);
    const inName = (await json(archive, '本')).hits;
    expect(inName.map((h) => [h.kind, h.prototype.id, h.match, h.after])).toEqual([['prototype', '17', '本', '語']]);
  });

  it('names the element and links to its page view at the element', async () => {
    const hits = (await json(archive, 'einlosen')).hits;
    expect(hits).toHaveLength(1);
    const [hit] = hits as [Hit];
    expect(hit.kind).toBe('element');
    expect(hit.target).toMatch(new RegExp(`^prototypes/3/r\\d+/pages/${PAGE}\\.view\\.html#${hit.id}$`));
    // Any text field of the element's JSON, by its name.
    expect((await json(archive, 'cafe coupon')).hits.map((h) => [h.field, h.id])).toEqual([['placeholder', hit.id]]);
    // An element of a layer names the layer and opens the first page that shows it.
    const onLayer = (await json(archive, 'ωmega')).hits;
    expect(onLayer.map((h) => [h.kind, h.layer?.id, h.page?.id, h.target.replace(/\/r\d+\//, '/r*/')])).toEqual([
      ['element', LAYER, PAGE, `prototypes/3/r*/pages/${PAGE}.view.html#${onLayer[0]?.id}`],
    ]);
  });

  it('keeps to the kinds and prototypes asked for', async () => {
    const all = (await json(archive, 'e')).hits;
    const kinds = new Set(all.map((h) => h.kind));
    expect([...kinds].sort()).toEqual(['discussion', 'element', 'layer', 'milestone', 'page', 'prototype']);
    const milestones = (await json(archive, 'e', '--kind', 'milestone')).hits;
    expect(milestones.length).toBeGreaterThan(0);
    expect(milestones).toEqual(all.filter((h) => h.kind === 'milestone'));
    const two = (await json(archive, 'e', '--kind', 'page', '--kind', 'layer')).hits;
    expect(two).toEqual(all.filter((h) => h.kind === 'page' || h.kind === 'layer'));
    const one = await json(archive, 'e', '--prototype', '17');
    expect(one.hits.length).toBeGreaterThan(0);
    expect(one.hits).toEqual(all.filter((h) => h.prototype.id === '17'));
    expect(one.summary.prototypes).toBe(1);
    const both = (await json(archive, 'e', '--prototype', '17', '--prototype', '3', '--kind', 'discussion')).hits;
    expect(both).toEqual(all.filter((h) => ['3', '17'].includes(h.prototype.id) && h.kind === 'discussion'));
    expect((await search([archive, 'e', '--kind', 'pages'])).code).toBe(2);
  });

  it('finds the same in an archive from before the index, by reading its files', async () => {
    for (const query of ['e', 'uber', '支払', 'ελκ', 'ωmega', 'menu']) {
      const now = await json(archive, query);
      const before = await json(old, query);
      expect(now.summary).toMatchObject({ indexed: 5, scanned: 0 });
      expect(before.summary).toMatchObject({ indexed: 0, scanned: 5 });
      expect(before.lines.slice(0, -1)).toEqual(now.lines.slice(0, -1));
    }
  });

  it('prints no control character of the archive raw, in either form', async () => {
    const text = await search([archive, 'alarm']);
    expect(text.code).toBe(0);
    const lines = await search([archive, 'alarm', '--json']);
    for (const out of [text.stdout, lines.stdout]) {
      // eslint-disable-next-line no-control-regex
      expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/);
    }
    expect(text.stdout).toContain('\\u{1b}[31mred\\u{7} \\u{202e}evil\\u{202c} \\u{9b}1m and\\u{2028}more');
    expect(text.stdout).toContain('«alarm»');
    const [hit] = (await json(archive, 'alarm')).hits as [Hit];
    expect(hit.after).toBe(' \u001b[31mred\u0007 \u202eevil\u202c \u009b1m and\u2028more');
  });

  it('refuses a query of nothing but accents or spaces as a usage error', async () => {
    for (const query of ['', '   ', '\u0301\u0308']) expect((await search([archive, query])).code).toBe(2);
  });
});
