import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/**
 * The folders of src/ from the bottom up (data flows one way: a layer calls the ones below it and
 * hears back through return values). A folder imports only from folders on a lower line; folders
 * on one line import nothing of each other. The one place this order is written down.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['core'], // generic helpers: errors, durations, chunked and positional reads, private files
  ['zip'], // the zip format, writer and reader: node: and core only, so it could be published alone
  ['api'], // what knows the service: paths, ids, revisions, the parsing of its answers
  ['client'], // HTTP only: hands bodies on, stores nothing
  ['storage'], // file I/O: spool, pack, journal, file entries
  ['manifest'], // the archive's manifest: model, writer, stream reader
  ['archive'], // an archive on top of zip/: the sink, the catalog, an earlier archive as a body cache
  ['verify'], // checks an archive (export verifies what it staged)
  ['crawl'], // what to fetch and in which order; what it stores goes to a sink the caller gives it
  ['search'], // the texts of an archive, its search index and the search over it
  ['site'], // the offline viewer's files inside the archive, the page requisites they need included
  ['export'], // the story of an export
  ['live-check'], // an archive compared with the service it came from, through export's client
  ['backup', 'convert', 'diff', 'links', 'monitor', 'progress', 'restore', 'viewer'], // the other commands
  ['cli'], // flags, output, exit codes
];

/** The bundled fake service stands apart: it may use these, and only these import it. */
const ISLAND = { name: 'fake-service', uses: ['core', 'api'], usedBy: ['cli'] };

const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(?\s*['"]([^'"]+)['"]/g;

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(path);
      return Promise.resolve(entry.name.endsWith('.ts') ? [path] : []);
    }),
  );
  return nested.flat();
}

function folderOf(path: string): string | undefined {
  const inSrc = relative(SRC, path);
  if (inSrc.startsWith('..')) return undefined;
  return inSrc.split('/')[0];
}

function layerOf(folder: string): number {
  return LAYERS.findIndex((layer) => layer.includes(folder));
}

/** Why `from` may not import `to`, or undefined when it may. */
function refusal(from: string, to: string): string | undefined {
  if (from === to) return undefined;
  if (from === ISLAND.name) return ISLAND.uses.includes(to) ? undefined : `${ISLAND.name} uses only ${ISLAND.uses}`;
  if (to === ISLAND.name) return ISLAND.usedBy.includes(from) ? undefined : `only ${ISLAND.usedBy} uses ${to}`;
  const [below, above] = [layerOf(to), layerOf(from)];
  if (below < 0 || above < 0) return `a folder missing from LAYERS`;
  return below < above ? undefined : `${to} is not below ${from}`;
}

describe('source layout', () => {
  it('every import points down the layer order', async () => {
    const files = await sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    const wrong: string[] = [];
    let checked = 0;
    for (const file of files) {
      const from = folderOf(file)!;
      const text = await readFile(file, 'utf8');
      for (const match of text.matchAll(SPECIFIER)) {
        const specifier = match[1] ?? match[2]!;
        if (!specifier.startsWith('.')) continue;
        const to = folderOf(join(dirname(file), specifier));
        if (to === undefined) continue; // ../package.json and the like
        checked++;
        const why = refusal(from, to);
        if (why !== undefined) wrong.push(`src/${relative(SRC, file)} imports ${specifier}: ${why}`);
      }
    }
    expect(checked).toBeGreaterThan(500);
    expect(wrong).toEqual([]);
  });

  it('keeps the crawl to the crawl: it reaches nothing of the manifest, and every module of it serves the walk', async () => {
    const crawl = join(SRC, 'crawl');
    const files = await sourceFiles(SRC);
    const importsOf = new Map<string, string[]>();
    for (const file of files) {
      const text = await readFile(file, 'utf8');
      const targets = [...text.matchAll(SPECIFIER)]
        .map((match) => match[1] ?? match[2]!)
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => join(dirname(file), specifier).replace(/\.js$/, '.ts'));
      importsOf.set(file, targets);
    }
    const inCrawl = (path: string): boolean => !relative(crawl, path).startsWith('..');
    // What the crawl finds goes to the sink its caller gives it (crawl/crawl-sink.ts).
    const intoManifest = [...importsOf]
      .filter(([file]) => inCrawl(file))
      .flatMap(([file, targets]) => targets.filter((target) => folderOf(target) === 'manifest').map(() => file));
    expect(intoManifest.map((file) => relative(SRC, file))).toEqual([]);
    // Every module under crawl/ is the walk itself or what it uses, or is used by a caller other
    // than the viewer: the viewer's own helpers (page requisites) live in site/.
    const reached = new Set<string>();
    const visit = (file: string): void => {
      if (reached.has(file) || !inCrawl(file)) return;
      reached.add(file);
      for (const target of importsOf.get(file) ?? []) visit(target);
    };
    visit(join(crawl, 'crawl-account.ts'));
    for (const [file, targets] of importsOf) {
      if (inCrawl(file) || folderOf(file) === 'site') continue;
      for (const target of targets) visit(target);
    }
    const crawlFiles = files.filter(inCrawl);
    expect(crawlFiles.length).toBeGreaterThan(5);
    expect(crawlFiles.filter((file) => !reached.has(file)).map((file) => relative(SRC, file))).toEqual([]);
  });

  it('lets src/zip/ import only node: built-ins, core and itself', async () => {
    const zip = join(SRC, 'zip');
    const files = await sourceFiles(zip);
    expect(files.length).toBeGreaterThan(5);
    const specifiers: string[] = [];
    for (const file of files)
      for (const match of (await readFile(file, 'utf8')).matchAll(SPECIFIER)) specifiers.push(match[1] ?? match[2]!);
    expect(specifiers.length).toBeGreaterThan(20);
    expect(specifiers.filter((specifier) => !/^node:|^(?:\.\.\/core|\.)\/[^/]+$/.test(specifier))).toEqual([]);
  });

  it('names every folder of src/ once', async () => {
    const folders = (await readdir(SRC, { withFileTypes: true })).filter((entry) => entry.isDirectory());
    const named = [...LAYERS.flat(), ISLAND.name];
    expect(folders.map((entry) => entry.name).sort()).toEqual([...named].sort());
    expect(new Set(named).size).toBe(named.length);
  });

  it('refuses an import up, across a line or into the island', () => {
    expect(refusal('storage', 'manifest')).toBeDefined();
    expect(refusal('diff', 'restore')).toBeDefined();
    expect(refusal('export', 'fake-service')).toBeDefined();
    expect(refusal('fake-service', 'storage')).toBeDefined();
    expect(refusal('archive', 'storage')).toBeUndefined();
    expect(refusal('cli', 'fake-service')).toBeUndefined();
  });
});
