import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellBlocks } from '../helpers/doc-examples.js';
import { documents, PAGES_WITH_A_FILE, pageRunsAsWritten, ROOT, runPage, sampleService } from './page-examples.js';

const service = sampleService();

describe('the harness, on pages of its own', () => {
  it('finds the sh blocks, leaves sh no-run and text alone, and reads the exit marker', async () => {
    const page = join(ROOT, 'test/docs/fixtures/examples.md');
    const blocks = shellBlocks(await readFile(page, 'utf8'), 'examples.md');
    expect(blocks.map((block) => [block.line, block.expectedExit])).toEqual([
      [5, 0],
      [25, 2],
      [32, 0],
    ]);
    expect(blocks.some((block) => block.code.includes('exit 9'))).toBe(false);
    expect(await runPage(service(), blocks)).toBeUndefined();
  });

  it('fails with the block and its output when a block exits otherwise than expected', async () => {
    const page = join(ROOT, 'test/docs/fixtures/failing.md');
    const failure = await runPage(service(), shellBlocks(await readFile(page, 'utf8'), 'failing.md'));
    expect(failure).toContain('failing.md:1: the block exited 1, expected 0');
    expect(failure).toContain('rabbit-export verify not-there.zip');
    expect(failure).toContain('not-there.zip');
  });

  it('leaves no page out: each page said to have a test file of its own exists and has one', async () => {
    expect(await documents()).toEqual(expect.arrayContaining(PAGES_WITH_A_FILE));
    const dir = join(ROOT, 'test/docs');
    const files = (await readdir(dir)).filter((name) => /^examples-.*\.test\.ts$/.test(name));
    const sources = await Promise.all(files.map((name) => readFile(join(dir, name), 'utf8')));
    for (const page of PAGES_WITH_A_FILE) {
      expect(
        sources.filter((source) => source.includes(`pageRunsAsWritten(sampleService(), '${page}')`)),
        page,
      ).toHaveLength(1);
    }
  });
});

describe('every documented command runs as written', async () => {
  // The longest pages run from examples-*.test.ts, one file each; this file runs all the others.
  const pages = (await documents()).filter((page) => !PAGES_WITH_A_FILE.includes(page));
  for (const page of pages) pageRunsAsWritten(service, page);
});
