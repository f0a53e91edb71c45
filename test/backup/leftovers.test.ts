import { chmod, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { takeOverInterrupted } from '../../src/backup/leftovers.js';
import { tempDir } from '../helpers/temp.js';

/** A folder holding the work an interrupted night left for the archive `name`. */
async function interrupted(name: string): Promise<{ dir: string; work: string }> {
  const dir = await tempDir();
  const work = join(dir, `.${name}.rabbit-work`);
  await mkdir(work);
  await chmod(work, 0o700);
  await writeFile(join(work, 'journal.jsonl'), '{"t":"header","v":1,"baseUrl":"https://rabbit.test"}\n');
  return { dir, work };
}

describe('taking over an interrupted night', () => {
  it("moves the interrupted night's work to tonight's archive name", async () => {
    const { dir } = await interrupted('2026-11-27T020000Z.zip');
    expect(await takeOverInterrupted(dir, '2026-11-28T020000Z.zip')).toBe('2026-11-27T020000Z.zip');
    expect(await readdir(dir)).toEqual(['.2026-11-28T020000Z.zip.rabbit-work']);
    expect(await readdir(join(dir, '.2026-11-28T020000Z.zip.rabbit-work'))).toContain('journal.jsonl');
  });

  it('keeps the work where it is when tonight started in the same second as the interrupted night', async () => {
    const { dir, work } = await interrupted('2026-11-28T020000Z.zip');
    expect(await takeOverInterrupted(dir, '2026-11-28T020000Z.zip')).toBe('2026-11-28T020000Z.zip');
    expect(await readdir(work)).toContain('journal.jsonl');
  });
});

describe("tonight's work folder that is not ours to take", () => {
  it('is neither removed nor replaced by the interrupted work', async () => {
    const { dir, work } = await interrupted('2026-11-27T020000Z.zip');
    // Tonight's name is taken by a folder others may write to: not abandoned work of ours, and not ours to delete.
    const tonight = join(dir, '.2026-11-28T020000Z.zip.rabbit-work');
    await mkdir(tonight);
    await chmod(tonight, 0o777);
    await writeFile(join(tonight, 'theirs'), 'keep me');
    expect(await takeOverInterrupted(dir, '2026-11-28T020000Z.zip')).toBeNull();
    expect(await readdir(tonight)).toEqual(['theirs']);
    expect(await readdir(work)).toContain('journal.jsonl');
  });
});
