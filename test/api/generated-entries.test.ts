import { describe, expect, it } from 'vitest';
import { generatedPathOf, parseEntryPath } from '../../src/api/entry-paths.js';
import {
  GENERATED_NAMES,
  generatedAffixes,
  generatedEntryOf,
  parseGeneratedEntry,
  type GeneratedIds,
  type GeneratedName,
} from '../../src/api/generated-entries.js';
import { isPngEntry } from '../../src/api/paths.js';

const SHA = 'ab'.repeat(32);

/** Every generated entry with the name docs/archive-format.md (and docs/search.md for the index) gives it. */
const LAYOUT: [GeneratedName, GeneratedIds, string][] = [
  ['manifest', {}, 'manifest.json'],
  ['index', {}, 'index.html'],
  ['overview', { prototype: '4711' }, 'overview/prototype-4711.html'],
  ['search-index', {}, 'search/index.js'],
  ['search-part', { prototype: '4711' }, 'search/prototype-4711.js'],
  ['search-box', {}, 'search/search-box.js'],
  ['asset', { sha256: SHA, ext: 'png' }, `assets/${SHA}.png`],
  ['view-css', { sha256: SHA }, `assets/${SHA}.view.css`],
];

describe('the table of generated entries', () => {
  it('has the layout the archive format describes, and parses each name back', () => {
    expect(LAYOUT.map(([name]) => name).sort()).toEqual([...GENERATED_NAMES].sort());
    for (const [name, ids, path] of LAYOUT) {
      expect(generatedEntryOf(name, ids), name).toBe(path);
      expect(parseGeneratedEntry(path), name).toEqual({ name, ...ids });
    }
  });

  it.each<[GeneratedName, GeneratedIds]>([
    ['overview', {}],
    ['overview', { prototype: '../1' }],
    ['overview', { prototype: '1/2' }],
    ['overview', { prototype: '..' }],
    ['search-part', { prototype: '1?x' }],
    ['asset', { sha256: '../../etc/passwd', ext: 'png' }],
    ['asset', { sha256: SHA, ext: 'png/../x' }],
    ['asset', { sha256: SHA.toUpperCase(), ext: 'png' }],
    ['view-css', { sha256: SHA.slice(1) }],
  ])('builds no %s entry of %j', (name, ids) => {
    expect(() => generatedEntryOf(name, ids)).toThrow(expect.objectContaining({ code: 'BAD_ID' }));
  });

  it.each([
    'overview/prototype-.html',
    'overview/prototype-12a.html',
    'overview/prototype-1.html/x',
    'overview/prototype-1.htm',
    `overview/prototype-${'1'.repeat(31)}.html`,
    '/overview/prototype-1.html',
    'x/index.html',
    'index.html.bak',
    `assets/${SHA}`,
    `assets/${SHA}.`,
    `assets/${SHA}.view.css.x`,
    `assets/${SHA}x.png`,
    `assets/${SHA.slice(2)}.png`,
    'search/prototype-1.js.map',
    'prototypes/1/r2/prototype.json',
    '',
  ])('parses no generated entry from %j', (path) => {
    expect(parseGeneratedEntry(path)).toBeUndefined();
  });

  it('builds names for the ids an archive someone handed over holds, as readers do', () => {
    expect(generatedEntryOf('overview', { prototype: 'abc' })).toBe('overview/prototype-abc.html');
  });

  it('tells a script the text around the id of a prototype part', () => {
    const { prefix, suffix } = generatedAffixes('search-part');
    expect(`${prefix}42${suffix}`).toBe(generatedEntryOf('search-part', { prototype: '42' }));
    expect(() => generatedAffixes('asset')).toThrow(/not named by one placeholder/);
  });
});

describe('generated kinds of the table of resource kinds', () => {
  it('names the view of a page rendering by swapping its ending, and parses it as the view', () => {
    const view = generatedPathOf('page-view', 'prototypes/3/r6/pages/page1.html');
    expect(view).toBe('prototypes/3/r6/pages/page1.view.html');
    expect(parseEntryPath(view)).toEqual({ kind: 'page-view', prototype: '3', revision: 6, page: 'page1' });
  });

  it('refuses what is not an entry of the kind it is made from', () => {
    expect(() => generatedPathOf('page-view', 'prototypes/3/r6/pages/page1.png')).toThrow(
      expect.objectContaining({ code: 'BAD_ID' }),
    );
    expect(() => generatedPathOf('page', 'prototypes/3/r6/pages/page1.html')).toThrow(
      expect.objectContaining({ code: 'BAD_ID' }),
    );
  });
});

describe('isPngEntry', () => {
  it('reads the kind its builder gave, else the ending of the kinds whose body is PNG', () => {
    const png = 'prototypes/3/r6/pages/page1.png';
    expect(isPngEntry({ path: png })).toBe(true);
    expect(isPngEntry({ path: png, parsed: { kind: 'page-png', prototype: '3', page: 'page1' } })).toBe(true);
    expect(isPngEntry({ path: 'prototypes/3/r6/pages/page1.html' })).toBe(false);
    // The kind said wins: the name is not looked at.
    expect(isPngEntry({ path: png, parsed: { kind: 'page', prototype: '3', page: 'page1' } })).toBe(false);
  });
});
