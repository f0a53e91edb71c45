import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import ts from 'typescript';
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
import {
  KIND_NAMES,
  PROTOTYPE_FOLDER,
  RESOURCE_KINDS,
  REVISION_FOLDER,
  type KindName,
} from '../../src/api/resource-kinds.js';

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

/**
 * Regex literals and `new RegExp` patterns outside src/api/ that take an archive entry name or an
 * API path apart: each is a second owner of the layout the table owns.
 */
const ENTRY_PATTERN =
  /prototypes\\?[/.]|\\?\/(?:pages|layers|elements|discussions)\b|(?:^|[\^(|:])(?:pages|layers|elements|discussions)\\?\/|(?:pages|layers|elements|discussions)\|(?:pages|layers|elements|discussions)|r\\d[+*{]|\.xhtml|mode=|rabbit\\?\/api/;

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

function patternsIn(file: string, text: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isRegularExpressionLiteral(node)) found.push(node.text);
    if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && node.expression.getText(source) === 'RegExp') {
      for (const arg of node.arguments ?? []) found.push(arg.getText(source));
    }
    ts.forEachChild(node, visit);
  };
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  visit(source);
  return found;
}

describe('the table is the single owner of the archive layout', () => {
  it('the scan recognises the patterns it looks for', () => {
    const found = patternsIn(
      'x.ts',
      [
        'const a = /^prototypes\\/(\\d+)\\/r(\\d+)\\/(.+)$/;',
        'const b = /\\/elements\\/([^/?#]+?)(?:\\.json)?$/;',
        'const c = /^discussions\\/(\\d+)\\.json$/;',
        'const d = new RegExp(`^prototypes/${ID}/pages/${ID}\\\\.json$`);',
        'const e = /\\.xhtml\\?mode=(\\w+)$/;',
        'const f = /^prototypes\\.key([2-9])\\.json$/;',
        'const g = /^(?:pages|layers)\\/[^/]+\\/elements\\/[^/]+\\.json$/;',
        'const h = /^[A-Za-z0-9]+$/;',
        "const i = 'prototypes/1.json'.replace(/\\/+$/, '');",
        'const j = /^(?:(?:pages|layers)\\/[^/]+\\/)?(?:pages|layers|elements|discussions)\\.json$/;',
      ].join('\n'),
    );
    expect(found.map((pattern) => ENTRY_PATTERN.test(pattern))).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      true,
    ]);
  });

  it('no module outside src/api/ (and the fake service) has a pattern that takes entry names apart', async () => {
    const root = join(import.meta.dirname, '../../src');
    const offenders: string[] = [];
    for (const file of await sourceFiles(root)) {
      const name = relative(root, file);
      if (name.startsWith('api/') || name.startsWith('fake-service/')) continue;
      for (const pattern of patternsIn(file, await readFile(file, 'utf8'))) {
        if (ENTRY_PATTERN.test(pattern)) offenders.push(`${name}: ${pattern}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

/**
 * The words the table names folders and files with (`pages`, `elements`, `pages.json`...), so the
 * scan below follows the table when a kind is added.
 */
const TEMPLATES = [
  PROTOTYPE_FOLDER,
  REVISION_FOLDER,
  ...KIND_NAMES.flatMap((kind) => [RESOURCE_KINDS[kind].entry, RESOURCE_KINDS[kind].api ?? '']),
];
const SEGMENTS = TEMPLATES.flatMap((template) => template.split('/'));
const FOLDERS = [...new Set(SEGMENTS.filter((segment) => /^[a-z]+$/.test(segment)))];
const FILES = [...new Set(SEGMENTS.filter((segment) => /^[a-z]+\.[a-z]+$/.test(segment)))];
/** A segment with text before its placeholder: `r{revision}` (a folder), `prototypes.key{key}.json`. */
const SHAPED = [...new Set(SEGMENTS.filter((segment) => /^[^{}]+\{\w+\}/.test(segment)))];

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const words = (list: string[]): string => list.map(escape).join('|');
/**
 * What builds a name of a known kind, in the text of a template literal or a concatenation with
 * each computed part written `${}`: a kind's folder next to a computed id (`pages/${}`,
 * `${}/elements`), a file of the table joined to a computed path (`${}/elements.json`,
 * `${}prototypes.json`), or a shaped segment (`/r${}/`, `prototypes.key${}`).
 */
const START = '(?:^|/|\\$\\{\\})';
const BUILD_PATTERN = new RegExp(
  [
    `${START}(?:${words(FOLDERS)})/\\$\\{\\}`,
    `\\$\\{\\}/(?:${words(FOLDERS)})(?:$|[/.])`,
    `\\$\\{\\}/?(?:${words(FILES)})`,
    ...SHAPED.map((segment) => {
      const [prefix = '', suffix = ''] = segment.split(/\{\w+\}/);
      return `${START}${escape(prefix)}\\$\\{\\}${suffix === '' ? '/' : ''}`;
    }),
  ].join('|'),
);

/** The text of every template literal with a computed part and of every concatenation with a string, computed parts as `${}`. */
function builtTexts(file: string, text: string): string[] {
  const found: string[] = [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const textOf = (node: ts.Node): string => {
    if (ts.isParenthesizedExpression(node)) return textOf(node.expression);
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isTemplateExpression(node))
      return node.head.text + node.templateSpans.map((span) => `\${}${span.literal.text}`).join('');
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken)
      return textOf(node.left) + textOf(node.right);
    return '${}';
  };
  const isPlus = (node: ts.Node): node is ts.BinaryExpression =>
    ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken;
  const hasString = (node: ts.Node): boolean =>
    ts.isStringLiteral(node) ||
    ts.isNoSubstitutionTemplateLiteral(node) ||
    ts.isTemplateExpression(node) ||
    (ts.isParenthesizedExpression(node) && hasString(node.expression)) ||
    (isPlus(node) && (hasString(node.left) || hasString(node.right)));
  const visit = (node: ts.Node): void => {
    if (ts.isTemplateExpression(node)) found.push(textOf(node));
    // A chain of `+` once, from its top, when a string is in it.
    if (isPlus(node) && !isPlus(node.parent) && hasString(node)) found.push(textOf(node));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('names of known kinds are built by the table alone', () => {
  it('the scan recognises templates and concatenations that build them, and not other text', () => {
    const built = [
      'const a = `pages/${id}.json`;',
      'const b = `prototypes/${id}/r${rev}/${rest}`;',
      'const c = `${parent}/elements/${id}.json`;',
      'const d = `${base}/elements/${el}.json`;',
      'const e = `${API_PREFIX}prototypes.json`;',
      'const f = `prototypes.key${n}.json`;',
      "const g = 'pages/' + id + '.json';",
      "const h = API_PREFIX + 'prototypes/' + id + '.json';",
      'const i = `${this.parentPath(parent)}/elements`;',
      'const j = `${parent}/elements.json`;',
      'const k = `discussions/${d}.json`;',
      "const l = folder + 'r' + revision + '/';",
      'const m = `${API_PREFIX}prototypes/${prototype}/${collectionOf(kind)}.json`;',
      'const n = `layers/${layerId}`;',
    ];
    const other = [
      'const a = `r${revision} archived`;',
      'const b = `overview/prototype-${id}.html`;',
      'const c = `/rabbit/edit/${id}`;',
      'const d = `${owner}:elements`;',
      'const e = `${name}.json`;',
      "const f = 'pages.json';",
      'const g = `${count} pages, ${n} elements`;',
      "const h = 'element ' + id + ' of ' + parent;",
      'const i = `prototype ${id} r${revision}: ${name}`;',
      'const j = `the elements of ${parentLabel}`;',
    ];
    const texts = (lines: string[]) => lines.map((line) => builtTexts('x.ts', line));
    expect(texts(built).map((found) => found.some((text) => BUILD_PATTERN.test(text)))).toEqual(built.map(() => true));
    expect(
      texts(other)
        .flat()
        .filter((text) => BUILD_PATTERN.test(text)),
    ).toEqual([]);
  });

  it('no module outside src/api/ (and the fake service) builds an entry name or API path of a known kind', async () => {
    const root = join(import.meta.dirname, '../../src');
    const offenders: string[] = [];
    for (const file of await sourceFiles(root)) {
      const name = relative(root, file);
      if (name.startsWith('api/') || name.startsWith('fake-service/')) continue;
      for (const text of builtTexts(file, await readFile(file, 'utf8'))) {
        if (BUILD_PATTERN.test(text)) offenders.push(`${name}: ${text}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
