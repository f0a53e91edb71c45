import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SAMPLE_IDS } from './sample-ids.js';
import { GENERATED_ENTRIES, GENERATED_NAMES } from '../../src/api/generated-entries.js';
import {
  ASSET_FOLDER,
  KIND_NAMES,
  PROTOTYPE_FOLDER,
  RESOURCE_KINDS,
  REVISION_FOLDER,
} from '../../src/api/resource-kinds.js';

/**
 * The tables of src/api/ (resource-kinds.ts, generated-entries.ts) are the one owner of the
 * archive's layout: no module outside src/api/ builds an entry name or takes one apart by itself.
 * The fake service plays the service and keeps its own idea of the paths, so it is not scanned.
 * Each scan is first shown to catch what it looks for, and to leave other text alone.
 */
const SRC = join(import.meta.dirname, '../../src');

/** The modules scanned, by their name below src/. */
async function scannedFiles(): Promise<{ name: string; text: string }[]> {
  const files = [];
  for (const file of await sourceFiles(SRC)) {
    const name = relative(SRC, file);
    if (name.startsWith('api/') || name.startsWith('fake-service/')) continue;
    files.push({ name, text: await readFile(file, 'utf8') });
  }
  return files;
}

/**
 * The words the tables name folders and files with (`pages`, `elements`, `pages.json`,
 * `overview`, `index.html`...), so the scans follow the tables when a kind or a file is added.
 */
const TEMPLATES = [
  PROTOTYPE_FOLDER,
  REVISION_FOLDER,
  ASSET_FOLDER,
  ...KIND_NAMES.flatMap((kind) => [RESOURCE_KINDS[kind].entry, RESOURCE_KINDS[kind].api ?? '']),
  ...GENERATED_NAMES.map((name) => GENERATED_ENTRIES[name].entry),
];
const SEGMENTS = TEMPLATES.flatMap((template) => template.split('/'));
const FOLDERS = [...new Set(SEGMENTS.filter((segment) => /^[a-z]+$/.test(segment)))];
const FILES = [...new Set(SEGMENTS.filter((segment) => /^[a-z-]+\.[a-z]+$/.test(segment)))];
/** A segment with text before its placeholder: `r{revision}` (a folder), `prototypes.key{key}.json`. */
const SHAPED = [...new Set(SEGMENTS.filter((segment) => /^[^{}]+\{\w+\}/.test(segment)))];
/** What names end with after their last placeholder: `.json`, `.png`, `.view.html`, `.view.css`... */
const ENDINGS = [
  ...new Set(
    TEMPLATES.map((template) => template.slice(template.lastIndexOf('}') + 1)).filter((ending) =>
      /^\.[a-z]+(?:\.[a-z]+)?$/.test(ending),
    ),
  ),
];
/** Endings of more than one extension (`.view.html`) say an entry name wherever they stand. */
const COMPOUND_ENDINGS = ENDINGS.filter((ending) => ending.lastIndexOf('.') > 0);
/** The prefixes of the ids that have one (`page`, `layer`, `element`), which tell the id's kind. */
const ID_PREFIXES = Object.values(SAMPLE_IDS)
  .map((id) => id.replace(/\d+$/, ''))
  .filter((prefix) => prefix !== '');

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const words = (list: readonly string[]): string => list.map(escape).join('|');

/**
 * Regex literals and `new RegExp` patterns outside src/api/ that take an archive entry name or an
 * API path apart: each is a second owner of the layout the table owns. Besides the folders and
 * paths of the service, a pattern that names an ending of the tables' names (`\\.html$`) or one of
 * their files or folders (`^overview\\/`) is one.
 */
const ENTRY_PATTERN =
  /prototypes\\?[/.]|\\?\/(?:pages|layers|elements|discussions)\b|(?:^|[\^(|:])(?:pages|layers|elements|discussions)\\?\/|(?:pages|layers|elements|discussions)\|(?:pages|layers|elements|discussions)|r\\d[+*{]|\.xhtml|mode=|rabbit\\?\/api|\^\(?(?:\?:)?(?:page|layer|element)(?:\\d|\|)/;

function takesNamesApart(pattern: string): boolean {
  return ENTRY_PATTERN.test(pattern) || namesPiece(pattern.replace(/\\(.)/g, '$1'), ENDINGS);
}

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/**
 * A module parsed once for the four scans (each walks every module of src/): parsing them all
 * again for each scan was most of the scans' time. Keyed by name, and parsed again for other text.
 */
const parsedFiles = new Map<string, ts.SourceFile>();
function parsed(file: string, text: string): ts.SourceFile {
  const kept = parsedFiles.get(file);
  if (kept?.text === text) return kept;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  parsedFiles.set(file, source);
  return source;
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
  const source = parsed(file, text);
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
        "const k = path.replace(/\\.html$/, '.view.html');",
        'const l = /^overview\\/prototype-(\\d+)\\.html$/;',
        "const m = name.replace(/\\.zip$/i, '');",
        'const n = /^"([0-9]{1,40})",?$/;',
        'const o = /^layer\\d+$/;',
        'const p = /^(?:page|layer)\\d{1,30}$/;',
        'const q = /^pages? \\d+$/;',
      ].join('\n'),
    );
    expect(found.map((pattern) => takesNamesApart(pattern))).toEqual([
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
      true,
      true,
      false,
      false,
      true,
      true,
      false,
    ]);
  });

  it('no module outside src/api/ (and the fake service) has a pattern that takes entry names apart', async () => {
    const offenders: string[] = [];
    for (const { name, text } of await scannedFiles()) {
      for (const pattern of patternsIn(name, text)) {
        if (takesNamesApart(pattern)) offenders.push(`${name}: ${pattern}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

/**
 * What builds a name of a known kind, in the text of a template literal or a concatenation with
 * each computed part written `${}`: a kind's folder next to a computed id (`pages/${}`,
 * `${}/elements`), a file of the table joined to a computed path (`${}/elements.json`,
 * `${}prototypes.json`), or a shaped segment (`/r${}/`, `prototypes.key${}.json`, `prototype-${}.html`).
 */
const START = '(?:^|/|\\$\\{\\})';
const BUILD_PATTERN = new RegExp(
  [
    `${START}(?:${words(FOLDERS)})/\\$\\{\\}`,
    `\\$\\{\\}/(?:${words(FOLDERS)})(?:$|[/.])`,
    `\\$\\{\\}/?(?:${words(FILES)})`,
    ...SHAPED.map((segment) => {
      const [prefix = '', suffix = ''] = segment.split(/\{\w+\}/);
      return `${START}${escape(prefix)}\\$\\{\\}${suffix === '' ? '/' : escape(suffix)}`;
    }),
  ].join('|'),
);

/** The text of every template literal with a computed part and of every concatenation with a string, computed parts as `${}`. */
function builtTexts(file: string, text: string): string[] {
  const found: string[] = [];
  const source = parsed(file, text);
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
      'const o = `overview/prototype-${id}.html`;',
      'const p = `${SEARCH_DIR}prototype-${id}.js`;',
      'const q = `assets/${sha}.view.css`;',
    ];
    const other = [
      'const a = `r${revision} archived`;',
      'const b = `overview of prototype ${id}.html`;',
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
    const offenders: string[] = [];
    for (const { name, text } of await scannedFiles()) {
      for (const built of builtTexts(name, text)) {
        if (BUILD_PATTERN.test(built)) offenders.push(`${name}: ${built}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

/** A file of the tables as a whole segment, or one of their folders opening a segment (also as written in a pattern). */
const FILE_PATTERN = new RegExp(`(?:^|[/^(|:]|\\$\\{\\})(?:${words(FILES)})(?:$|[/?#$)])`);
const FOLDER_PATTERN = new RegExp(`(?:^|[/^(|:]|\\$\\{\\})(?:${words(FOLDERS)})/`);

/** Whether `text` names a file or folder of the tables, or holds one of `endings`. */
function namesPiece(text: string, endings: readonly string[]): boolean {
  return FILE_PATTERN.test(text) || FOLDER_PATTERN.test(text) || endings.some((ending) => text.includes(ending));
}

/** The methods that test or cut a name by a piece of it. */
const NAME_METHODS = new Set(['endsWith', 'startsWith', 'replace', 'replaceAll']);

/**
 * What a module says of names in its own words: every string literal and template (computed parts
 * as `${}`) that is a name rather than a sentence (no white space), a module's own imports aside;
 * and every literal or pattern handed to endsWith, startsWith or replace, with `method` set.
 */
function nameTexts(file: string, text: string): { text: string; method?: string }[] {
  const found: { text: string; method?: string }[] = [];
  const source = parsed(file, text);
  const literalText = (node: ts.Node): string | undefined => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isTemplateExpression(node))
      return node.head.text + node.templateSpans.map((span) => `\${}${span.literal.text}`).join('');
    if (ts.isRegularExpressionLiteral(node))
      return node.text.slice(1, node.text.lastIndexOf('/')).replace(/\\(.)/g, '$1');
    return undefined;
  };
  const isSpecifier = (node: ts.Node): boolean =>
    ts.isImportDeclaration(node.parent) ||
    ts.isExportDeclaration(node.parent) ||
    (ts.isCallExpression(node.parent) && node.parent.expression.kind === ts.SyntaxKind.ImportKeyword);
  /** A literal handed to one of NAME_METHODS is found once, as that. */
  const tested = new Set<ts.Node>();
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const argument = node.arguments[0];
      const argumentText = argument === undefined ? undefined : literalText(argument);
      if (NAME_METHODS.has(method) && argument !== undefined && argumentText !== undefined) {
        found.push({ text: argumentText, method });
        tested.add(argument);
      }
    }
    if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) &&
      !isSpecifier(node) &&
      !tested.has(node)
    ) {
      const literal = literalText(node) as string;
      if (!/\s/.test(literal)) found.push({ text: literal });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Whether a text nameTexts found is a name of the tables, or a piece a name is tested or cut by. */
function isNamePiece({ text, method }: { text: string; method?: string }): boolean {
  if (method === undefined) return ENDINGS.includes(text) || namesPiece(text, COMPOUND_ENDINGS);
  return namesPiece(text, ENDINGS) || (method === 'startsWith' && ID_PREFIXES.includes(text));
}

/**
 * Names of other formats that share a word with ours, each with why: the scan cannot tell them
 * apart by their text.
 */
const OTHER_FORMATS: Record<string, string> = {
  'convert/wacz/write-wacz.ts: pages/pages.jsonl': "a WACZ's list of pages, in the WACZ's own layout",
};

describe('no module outside src/api/ names an entry in its own words', () => {
  it('the scan finds names and the pieces names are tested and cut by, and leaves other text alone', () => {
    const named = [
      "if (path.endsWith('/prototype.json')) return;",
      "const kind = source.endsWith('.png') ? 'png' : 'api';",
      "const view = path.replace(/\\.html$/, '.view.html');",
      "const kind = parent.startsWith('page') ? 'page' : 'layer';",
      "if (name.startsWith('overview/')) return;",
      "const INDEX = 'index.html';",
      "const MANIFEST = 'manifest.json';",
      "const ENDING = '.png';",
      'const part = `${root}search/index.js`;',
      "const folder = 'assets/';",
      'const view = `${page}.view.html`;',
    ];
    const other = [
      "if (name.endsWith('.sha256')) return;",
      "if (file.endsWith('.zip')) return;",
      "if (type.startsWith('image/png')) return;",
      "const message = 'manifest.json is not a JSON object';",
      "import { searchBoxHtml } from './search-box.js';",
      "const category = 'pages';",
      "const trimmed = url.replace(/\\/+$/, '');",
      "const type = 'text/html; charset=utf-8';",
      "if (url.pathname.startsWith('/archive/')) return;",
      "const key = 'page-view';",
    ];
    const flagged = (line: string): boolean => nameTexts('x.ts', line).some(isNamePiece);
    expect(named.filter((line) => !flagged(line))).toEqual([]);
    expect(other.filter(flagged)).toEqual([]);
  });

  it('no module outside src/api/ (and the fake service) has a name or a piece of one as a literal', async () => {
    const offenders: string[] = [];
    for (const { name, text } of await scannedFiles()) {
      for (const found of nameTexts(name, text).filter(isNamePiece)) {
        const offender = `${name}: ${found.method === undefined ? '' : `${found.method} `}${found.text}`;
        if (OTHER_FORMATS[`${name}: ${found.text}`] === undefined) offenders.push(offender);
      }
    }
    expect(offenders).toEqual([]);
  });
});

/**
 * A name put together as path pieces rather than as one text: `join(out, 'pages', `${id}.json`)`,
 * `posix.join('prototypes', id, 'r' + revision)`, `[root, 'elements', file].join('/')`. Each piece
 * alone reads as a word, so the scans above let it pass; as a piece of a joined path it is a
 * folder, a file or a shaped segment of the tables.
 */
const PIECE_PATTERN = new RegExp(
  [
    `^(?:${words([...FOLDERS, ...FILES])})/?$`,
    `^\\$\\{\\}(?:${words(ENDINGS)})$`,
    ...SHAPED.map((segment) => {
      const [prefix = '', suffix = ''] = segment.split(/\{\w+\}/);
      return `^${escape(prefix)}\\$\\{\\}${escape(suffix)}/?$`;
    }),
  ].join('|'),
);

/** The texts of the pieces handed to a join or resolve of paths, or to `[...].join(...)`, computed parts as `${}`. */
function joinedPieces(file: string, text: string): string[] {
  const found: string[] = [];
  const source = parsed(file, text);
  const textOf = (node: ts.Node): string => {
    if (ts.isParenthesizedExpression(node)) return textOf(node.expression);
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isTemplateExpression(node))
      return node.head.text + node.templateSpans.map((span) => `\${}${span.literal.text}`).join('');
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken)
      return textOf(node.left) + textOf(node.right);
    return '${}';
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : undefined;
      if (name === 'join' && ts.isPropertyAccessExpression(callee) && ts.isArrayLiteralExpression(callee.expression)) {
        // An array joined into a path: by '/' or a path separator (`sep`, `path.sep`).
        const by = node.arguments[0];
        const separator = by !== undefined && (textOf(by) === '/' || /(?:^|\.)sep$/.test(by.getText(source)));
        if (separator) found.push(...callee.expression.elements.map(textOf));
      } else if (name === 'join' || name === 'resolve') found.push(...node.arguments.map(textOf));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.filter((piece) => piece !== '${}');
}

describe('names of known kinds are not joined from pieces either', () => {
  it('the scan finds folders, files and shaped segments of the tables handed to a join, and not other pieces', () => {
    // a to d pass every scan above.
    const joined = [
      'const a = join(out, "pages", `${id}.json`);',
      "const b = posix.join('prototypes', id, 'r' + revision);",
      "const c = [root, 'elements', file].join('/');",
      'const d = join(dir, `${id}.png`);',
      "const e = path.resolve(folder, 'elements.json');",
      'const f = join(site, `prototype-${id}.html`);',
      'const g = join(dir, `${page}.view.html`);',
    ];
    const other = [
      "const a = join(dir, 'manifest-cache');",
      'const b = join(dirname(archive), `.${basename(archive)}.restore-${prototype}.jsonl`);',
      "const c = join(tmp, 'out.zip');",
      "const d = lines.join('\\n');",
      'const e = join(outDir, `${name}.drawio`);',
      "const f = [count, 'pages'].join(' ');",
    ];
    const flagged = (line: string): boolean => joinedPieces('x.ts', line).some((piece) => PIECE_PATTERN.test(piece));
    expect(joined.filter((line) => !flagged(line))).toEqual([]);
    expect(other.filter(flagged)).toEqual([]);
  });

  it('no module outside src/api/ (and the fake service) joins a name of the tables from pieces', async () => {
    const offenders: string[] = [];
    for (const { name, text } of await scannedFiles()) {
      for (const piece of joinedPieces(name, text)) {
        if (PIECE_PATTERN.test(piece)) offenders.push(`${name}: ${piece}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
