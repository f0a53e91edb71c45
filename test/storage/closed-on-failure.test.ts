import { open, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { WriteJournal } from '../../src/restore/write-journal.js';
import { JournalWriter } from '../../src/storage/journal.js';
import { PackFile } from '../../src/storage/pack-file.js';
import { tempDir } from '../helpers/temp.js';

type Method = 'read' | 'write' | 'stat';

/**
 * Makes the `nth` call of `method` on any FileHandle fail with `code`, as a full disk or a failing
 * drive would; returns the handle it failed on. A file opened and then failing must be closed by
 * whoever opened it: one left to the garbage collector is a warning today and an error in a later
 * Node, and a long-running `view` would hold it until then.
 */
async function failOnce(method: Method, nth: number, code: string): Promise<() => FileHandle | undefined> {
  const probe = await open(process.execPath, 'r');
  const prototype = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const original = prototype[method] as (...args: unknown[]) => Promise<unknown>;
  let calls = 0;
  const spy = vi.spyOn(prototype, method).mockImplementation(function (this: FileHandle, ...args: unknown[]) {
    if (++calls !== nth) return original.apply(this, args);
    return Promise.reject(Object.assign(new Error(`${code} (made by the test)`), { code }));
  } as never);
  onTestFinished(() => spy.mockRestore());
  return () => spy.mock.contexts[nth - 1] as FileHandle | undefined;
}

describe('a file opened and then failing is closed by its opener', () => {
  it('the journal, when its last byte cannot be read on resume', async () => {
    const path = join(await tempDir(), 'journal');
    await writeFile(path, '{"t":"header"}\n', { mode: 0o600 });
    const failedOn = await failOnce('read', 1, 'EIO');
    await expect(
      JournalWriter.open(path, 'https://rabbit.test', false, { written: async () => undefined }),
    ).rejects.toMatchObject({
      code: 'EIO',
    });
    expect(failedOn()?.fd).toBe(-1);
  });

  it('the restore journal, when its first line finds the disk full', async () => {
    const path = join(await tempDir(), 'restore-journal');
    const failedOn = await failOnce('write', 1, 'ENOSPC');
    await expect(
      WriteJournal.open(path, { baseUrl: 'http://127.0.0.1:1', prototype: '7' }, { created: new Map(), unfinished: 0 }),
    ).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(failedOn()?.fd).toBe(-1);
  });

  it('the spool pack, when its size cannot be read', async () => {
    const path = join(await tempDir(), 'pack');
    // The first stat is the open's own check of the file; the second is the pack's.
    const failedOn = await failOnce('stat', 2, 'EIO');
    await expect(PackFile.open(path, (error) => error)).rejects.toMatchObject({ code: 'EIO' });
    expect(failedOn()?.fd).toBe(-1);
  });
});
