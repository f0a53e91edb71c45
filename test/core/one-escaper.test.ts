import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Markup escaping lives in one module (src/core/xml-escape.ts). This reads every source file with
 * the TypeScript parser and lists those that escape `&` themselves: a `replace` whose arguments
 * write a reference for it (`&amp;`, `&#38;`, `&#x26;`, or any `&#${...}` built from the matched
 * character), or a table that maps `'&'` to one.
 */
const SRC = join(import.meta.dirname, '../../src');
const THE_ESCAPER = 'core/xml-escape.ts';

const AMPERSAND_REFERENCE = /&(?:amp;|#0*38;|#x0*26;)/i;
/** A template that builds a numeric reference from what it is given: `&#${code};`, `&#x${hex};`. */
const BUILT_REFERENCE = /&#x?$/i;
/**
 * What the source text of any literal the scan flags must hold, looser than the scan: a raw `&`
 * followed by `a`, `#` or a backslash (an escape, a line continuation), or `&` itself written as an
 * escape. Parsing is most of the scan's cost and most files hold none of these, so only those that
 * do are parsed; the first test checks that every escaper it knows passes this too.
 */
const MAY_ESCAPE = /&(?:a|#|\\)|\\(?:x26|u0*26|u\{0*26\}|0*46)/i;

function escapesAmpersand(source: string, name = 'file.ts'): boolean {
  if (!MAY_ESCAPE.test(source)) return false;
  const file = ts.createSourceFile(name, source, ts.ScriptTarget.Latest, true);
  let found = false;
  const writesReference = (node: ts.Node): boolean =>
    ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && AMPERSAND_REFERENCE.test(node.text)) ||
    ((ts.isTemplateHead(node) || ts.isTemplateMiddle(node)) &&
      (AMPERSAND_REFERENCE.test(node.text) || BUILT_REFERENCE.test(node.text))) ||
    (ts.isTemplateTail(node) && AMPERSAND_REFERENCE.test(node.text));
  const isAmpersandKey = (name: ts.PropertyName): boolean =>
    (ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name)) && name.text === '&';
  const inEscaper = (node: ts.Node): boolean => {
    for (let at: ts.Node | undefined = node.parent; at !== undefined; at = at.parent) {
      if (ts.isPropertyAssignment(at) && isAmpersandKey(at.name)) return true;
      if (ts.isArrayLiteralExpression(at)) {
        const first = at.elements[0];
        if (first !== undefined && ts.isStringLiteral(first) && first.text === '&') return true;
      }
      if (ts.isCallExpression(at) && ts.isPropertyAccessExpression(at.expression)) {
        if (['replace', 'replaceAll'].includes(at.expression.name.text)) return true;
      }
    }
    return false;
  };
  const visit = (node: ts.Node): void => {
    if (writesReference(node) && inEscaper(node)) found = true;
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (/\.[cm]?[jt]s$/.test(entry.name)) out.push(path);
  }
  return out;
}

describe('one escaper for XML and HTML', () => {
  it('the scan knows an escaper when it sees one', () => {
    const escapers = [
      'const e = (t: string) => t.replace(/[&<>"\']/g, (c) => `&#${c.charCodeAt(0)};`);',
      "const e = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');",
      'const e = (t: string) => t.replaceAll("&", "&#38;");',
      "const E: Record<string, string> = { '&': '&amp;', '<': '&lt;' };",
      "const E = new Map([['&', '&#x26;']]);",
      'const e = (t: string) => t.replace(/[&<]/g, (c) => `&#x${c.charCodeAt(0).toString(16)};`);',
      // The reference spelled with escapes, or across a line continuation: the same text once read.
      String.raw`const e = (t: string) => t.replace(/&/g, '\x26amp;');`,
      String.raw`const e = (t: string) => t.replace(/&/g, '\u0026#38;');`,
      String.raw`const e = (t: string) => t.replace(/&/g, '\u{26}#x26;');`,
      String.raw`const e = (t: string) => t.replace(/&/g, '&\x61mp;');`,
      "const e = (t: string) => t.replace(/&/g, '&\\\namp;');",
    ];
    expect(escapers.filter((source) => !escapesAmpersand(source))).toEqual([]);
    const innocent = [
      "const footer = '<p>Terms &amp; conditions</p>';",
      "// written `&amp;` in HTML\nconst sep = '&';",
      "const q = url.replace(/&/g, '%26');",
    ];
    expect(innocent.filter((source) => escapesAmpersand(source))).toEqual([]);
  });

  it(`only ${THE_ESCAPER} escapes & in src/`, async () => {
    const files = await sourceFiles(SRC);
    const escaping: string[] = [];
    for (const path of files)
      if (escapesAmpersand(await readFile(path, 'utf8'), path)) escaping.push(relative(SRC, path));
    expect(files.length).toBeGreaterThan(100);
    expect(escaping).toEqual([THE_ESCAPER]);
  });
});
