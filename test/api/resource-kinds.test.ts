import { describe, expect, it } from 'vitest';
import { SAMPLE_IDS } from './sample-ids.js';
import {
  createdElementId,
  entryPathOf,
  parseEntryPath,
  parseRevisionEntry,
  parseSource,
  sourceOf,
  type ParsedPath,
  type PathIds,
} from '../../src/api/entry-paths.js';
import { archivePathFor, pageViewPathFor } from '../../src/api/paths.js';
import { KIND_NAMES, RESOURCE_KINDS, type KindName } from '../../src/api/resource-kinds.js';

const IDS = SAMPLE_IDS;

/** Every kind with the entry docs/archive-format.md gives it for the ids above at revision 17. */
const LAYOUT: [KindName, string][] = [
  ['prototype-list', 'prototypes.json'],
  ['key-list', 'prototypes.key2.json'],
  ['prototype', 'prototypes/4711/r17/prototype.json'],
  ['page-list', 'prototypes/4711/r17/pages.json'],
  ['page', 'prototypes/4711/r17/pages/page0001.json'],
  ['page-html', 'prototypes/4711/r17/pages/page0001.html'],
  ['page-view', 'prototypes/4711/r17/pages/page0001.view.html'],
  ['page-png', 'prototypes/4711/r17/pages/page0001.png'],
  ['page-sketched', 'prototypes/4711/r17/pages/page0001.sketched.xhtml'],
  ['page-plain', 'prototypes/4711/r17/pages/page0001.plain.xhtml'],
  ['page-element-list', 'prototypes/4711/r17/pages/page0001/elements.json'],
  ['page-element', 'prototypes/4711/r17/pages/page0001/elements/element9.json'],
  ['page-discussion-list', 'prototypes/4711/r17/pages/page0001/discussions.json'],
  ['layer-list', 'prototypes/4711/r17/layers.json'],
  ['layer', 'prototypes/4711/r17/layers/layer5.json'],
  ['layer-element-list', 'prototypes/4711/r17/layers/layer5/elements.json'],
  ['layer-element', 'prototypes/4711/r17/layers/layer5/elements/element9.json'],
  ['discussion-list', 'prototypes/4711/r17/discussions.json'],
  ['discussion', 'prototypes/4711/r17/discussions/88.json'],
];

/** The ids a kind's templates name, as parsing gives them back. */
function idsOf(kind: KindName): PathIds {
  const { api, entry } = RESOURCE_KINDS[kind];
  const ids: PathIds = {};
  for (const [name, value] of Object.entries(IDS) as [keyof PathIds, string][]) {
    if (`${api ?? ''}/${entry}`.includes(`{${name}}`)) ids[name] = value;
  }
  if (RESOURCE_KINDS[kind].scope === 'revision') ids.prototype = IDS.prototype;
  return ids;
}

describe('the table of resource kinds', () => {
  it('has the layout the archive format describes, one row per kind', () => {
    expect(LAYOUT.map(([kind]) => kind).sort()).toEqual([...KIND_NAMES].sort());
    for (const [kind, path] of LAYOUT) expect(entryPathOf(kind, { ...idsOf(kind), key: 2 }, 17), kind).toBe(path);
  });

  it.each(KIND_NAMES.filter((kind) => RESOURCE_KINDS[kind].api !== null))(
    '%s: the path archivePathFor gives its source parses back to the same kind and ids',
    (kind) => {
      const ids = idsOf(kind);
      const source = sourceOf(kind, ids);
      expect(parseSource(source)).toEqual({ kind, ...ids });
      const path = RESOURCE_KINDS[kind].query ? pageViewPathFor(source, 17) : archivePathFor(source, 17);
      const revision = RESOURCE_KINDS[kind].scope === 'revision' ? { revision: 17 } : {};
      expect(parseEntryPath(path)).toEqual<ParsedPath>({ kind, ...ids, ...revision });
    },
  );

  it.each([0, 1, 17, Number.MAX_SAFE_INTEGER])('revision %i parses back as itself', (revision) => {
    const path = archivePathFor(sourceOf('page-element', idsOf('page-element')), revision);
    expect(parseEntryPath(path)?.revision).toBe(revision);
  });

  it('looks at no name longer than any it builds', () => {
    const long = `prototypes/4711/r17/pages/page0001/elements/element${'9'.repeat(30)}.json`;
    expect(parseEntryPath(long)?.element).toBe(`element${'9'.repeat(30)}`);
    expect(parseEntryPath(`prototypes/4711/r17/${'pages/'.repeat(100)}page0001.json`)).toBeUndefined();
  });

  it('parses a revision folder of its own, and generated and account files', () => {
    expect(parseRevisionEntry('pages/page0001.view.html')).toEqual({ kind: 'page-view', page: 'page0001' });
    expect(parseRevisionEntry('discussions/88.json')).toEqual({ kind: 'discussion', discussion: '88' });
    expect(parseEntryPath('prototypes.key9999.json')).toEqual({ kind: 'key-list', key: 9999 });
  });

  it.each([
    'prototypes/4711/r17/pages/../prototype.json',
    'prototypes/4711/r17/../r18/prototype.json',
    '../prototypes.json',
    '/prototypes/4711/r17/prototype.json',
    '/prototypes.json',
    'prototypes/4711/r17/pages/%2e%2e.json',
    'prototypes/4711/r17/pages/page%2e1.json',
    'prototypes/%34711/r17/prototype.json',
    `prototypes/${'1'.repeat(31)}/r17/prototype.json`,
    `prototypes/4711/r17/pages/page${'1'.repeat(31)}.json`,
    `prototypes/4711/r17/discussions/${'8'.repeat(31)}.json`,
    'prototypes/4711/r01/prototype.json',
    'prototypes/4711/r-1/prototype.json',
    'prototypes/4711/r1.5/prototype.json',
    'prototypes/4711/rx/prototype.json',
    'prototypes/4711/r/prototype.json',
    'prototypes/4711/17/prototype.json',
    'prototypes/4711/r99999999999999999/prototype.json',
    'prototypes/4711/r9007199254740992/prototype.json',
    'prototypes/4711/r17/pages/page0001.json/',
    'prototypes//r17/prototype.json',
    'prototypes/4711/r17//pages/page0001.json',
    'prototypes\\4711\\r17\\prototype.json',
    'prototypes/4711/r17/pages/page\u0661.json',
    'prototypes/4711/r17/pages/PAGE1.json',
    'prototypes/4711/r17/pages/page0001.xhtml?mode=sketched',
    'prototypes/4711/r17/pages/page0001.xhtml',
    'prototypes/4711/r17/pages/page0001.view.html.json',
    'prototypes/4711/r17/layers/layer5/discussions.json',
    'prototypes/4711/r17/discussions/abc.json',
    'prototypes/4711/r17/elements/element9.json',
    'prototypes/4711/prototype.json',
    'prototypes.key1.json',
    'prototypes.key01.json',
    'prototypes.key10000.json',
    'prototypes.keyx.json',
    '',
  ])('refuses the entry name %j', (name) => {
    expect(parseEntryPath(name)).toBeUndefined();
  });

  it.each([
    '/rabbit/api/prototypes/1/pages/../../../etc/passwd',
    '/rabbit/api/prototypes/1/pages/.hidden',
    '/rabbit/api/prototypes/1//x',
    '/rabbit/api/prototypes/1/pages/page1.json?api_key=k',
    '/rabbit/api/prototypes/1/pages/page1.xhtml?mode=other',
    '/rabbit/api/prototypes/1/pages/page1.xhtml?mode=sketched?mode=plain',
    '/rabbit/api/prototypes/1/pages/page1.html?mode=sketched',
    '/rabbit/api/prototypes/1/r2/prototype.json',
    '/rabbit/api/prototypes.key2.json',
    '/rabbit/api/prototypes/1/pages/page1.view.html',
    '/elsewhere/prototypes/1.json',
    'rabbit/api/prototypes/1.json',
  ])('refuses the source %j', (source) => {
    expect(parseSource(source)).toBeUndefined();
  });

  it.each<[KindName, PathIds, number | undefined]>([
    ['page', { prototype: '1', page: '../x' }, 1],
    ['page', { prototype: '1' }, 1],
    ['prototype', { prototype: '1/../2' }, 1],
    ['prototype', { prototype: '1' }, -1],
    ['prototype', { prototype: '1' }, 1.5],
    ['prototype', { prototype: '1' }, undefined],
  ])('builds no entry of %s from %j at revision %s', (kind, ids, revision) => {
    expect(() => entryPathOf(kind, ids, revision)).toThrow(expect.objectContaining({ code: 'BAD_ID' }));
  });

  it('builds no source for what the service does not serve, nor from a bad id', () => {
    expect(() => sourceOf('page-view', IDS)).toThrow(expect.objectContaining({ code: 'BAD_ID' }));
    expect(() => sourceOf('discussion', { prototype: '1', discussion: '1e3' })).toThrow(
      expect.objectContaining({ code: 'BAD_ID' }),
    );
  });

  it.each([
    ['https://host/rabbit/api/prototypes/1/pages/page1/elements/element12.json', 'element12'],
    ['/base/rabbit/api/prototypes/1/layers/layer1/elements/element12?x=1#y', 'element12'],
    [' /rabbit/api/prototypes/1/pages/page1/elements/element12.json ', 'element12'],
    ['https://host/rabbit/api/prototypes/1/pages/page1/elements/..%2felement12.json', undefined],
    ['https://host/rabbit/api/prototypes/1/pages/page1/elements.json', undefined],
    ['https://host/rabbit/api/prototypes/1/pages/page1/elements/', undefined],
    ['http://[bad', undefined],
  ])('reads the created element of Location %j as %s', (location, id) => {
    expect(createdElementId(location)).toBe(id);
  });
});
