import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Tests judge archives with readers we did not write (yauzl in test/helpers/archive.ts, unzip,
 * Python's zipfile): a check made through our own zip reader passes on whatever the reader and
 * the writer agree on, however wrong. Only the reader's own tests may open archives with it.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const READER_TESTS = /^test\/(archive|zip)\//;
// This file names the reader in its own examples.
const SELF = 'test/helpers/readers.test.ts';

// Our reader's ways in, by name, so the rule holds wherever the modules live.
const READER_NAMES = ['openZip', 'openArchive', 'readArchiveManifest', 'readDirectoryEnd', 'ZipIndex'];
const READER_MODULE = /(^|\/)(zip-reader|zip\/reader|open-archive)(\.js)?$/;

/** Tests whose subject takes our opened archive as its input: they read nothing back to judge it. */
const SUBJECT_INPUT = new Map([
  ['test/verify/against-live.test.ts', "verify --against-live's sample plan, drawn from an opened archive"],
  ['test/progress/export-events.test.ts', 'the cost tally export --since keeps while the manifest streams by'],
  ['test/convert/package-outcome.test.ts', 'a package run given the opened archive, whose read-back is made to fail'],
  [
    'test/attack/source-path-agreement.test.ts',
    "the manifest reader's refusal of a crafted archive, as every reader meets it",
  ],
]);

async function testFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await testFiles(path)));
    else if (/\.(ts|mts|js|mjs)$/.test(entry.name)) out.push(relative(ROOT, path).split('\\').join('/'));
  }
  return out;
}

/** What a source file takes from our src/: each module it imports and the names it imports from it. */
function srcImports(text: string): { module: string; names: string[] }[] {
  const found: { module: string; names: string[] }[] = [];
  const statics = /import\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/g;
  for (const [, , clause = '', module = ''] of text.matchAll(statics)) {
    const names = /\{([^}]*)\}/.exec(clause)?.[1] ?? '';
    found.push({
      module,
      names: names.split(',').map(
        (name) =>
          name
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+as\s+/)[0] ?? '',
      ),
    });
  }
  for (const [, module = ''] of text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g))
    found.push({ module, names: ['*'] });
  return found.filter(({ module }) => /(^|\/)src\//.test(module));
}

function readsWithOurReader(text: string): string[] {
  return srcImports(text)
    .filter(({ module, names }) => READER_MODULE.test(module) || names.some((name) => READER_NAMES.includes(name)))
    .map(({ module }) => module);
}

describe('tests judge archives with readers we did not write', () => {
  it("no test outside the zip reader's own opens an archive with our reader, but those whose subject takes one", async () => {
    const users = new Map<string, string[]>();
    for (const file of (await testFiles(join(ROOT, 'test'))).filter((file) => file !== SELF)) {
      const modules = readsWithOurReader(await readFile(join(ROOT, file), 'utf8'));
      if (modules.length > 0) users.set(file, modules);
    }
    // The scan sees what it looks for: the reader's own tests import it.
    expect([...users.keys()].filter((file) => READER_TESTS.test(file)).length).toBeGreaterThan(3);
    const outside = [...users.keys()].filter((file) => !READER_TESTS.test(file));
    expect(outside.sort()).toEqual([...SUBJECT_INPUT.keys()].sort());
  });

  it('the scan finds a reader however it is imported', () => {
    expect(readsWithOurReader(`import { openZip } from '../../src/archive/zip-reader.js';`)).toHaveLength(1);
    expect(readsWithOurReader(`import { openZip as o } from '../../src/zip/zip-reader.js';`)).toHaveLength(1);
    expect(readsWithOurReader(`import * as zip from '../../src/zip/reader.js';`)).toHaveLength(1);
    expect(
      readsWithOurReader(`import {\n  readArchiveManifest,\n} from '../../src/archive/open-archive.js';`),
    ).toHaveLength(1);
    expect(
      readsWithOurReader(`const { openArchive } = await import('../../src/archive/open-archive.js');`),
    ).toHaveLength(1);
    expect(
      readsWithOurReader(`import yauzl from 'yauzl';\nimport { ZipWriter } from '../../src/archive/zip-writer.js';`),
    ).toEqual([]);
  });
});
