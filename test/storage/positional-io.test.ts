import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackgroundWrites, readAt, readAtSync, whole, writeFully } from '../../src/core/positional-io.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'positional-io-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('positional file I/O', () => {
  it('reads up to the length asked, fewer only where the file ends, the same blocking or not', async () => {
    const path = join(dir, 'f');
    await writeFile(path, '0123456789');
    const handle = await open(path, 'r');
    try {
      for (const [position, length, expected] of [
        [2, 3, '234'],
        [8, 5, '89'],
        [10, 4, ''],
        [0, 10, '0123456789'],
      ] as const) {
        expect((await readAt(handle, position, length)).toString()).toBe(expected);
        expect(readAtSync(handle.fd, position, length).toString()).toBe(expected);
      }
      const into = Buffer.alloc(16);
      expect(readAtSync(handle.fd, 0, 4, into).toString()).toBe('0123');
      // Read into the buffer given, not a new one.
      expect((await readAt(handle, 4, 4, into)).toString()).toBe('4567');
      expect(into.subarray(0, 4).toString()).toBe('4567');
      expect(whole(await readAt(handle, 0, 10), 10, 'f', 0).toString()).toBe('0123456789');
      expect(() => whole(readAtSync(handle.fd, 8, 5), 5, 'the pack', 8)).toThrow('the pack is cut short at 8');
    } finally {
      await handle.close();
    }
  });

  it('writes every byte, and background writes keep their first failure', async () => {
    const path = join(dir, 'f');
    const handle = await open(path, 'w+');
    const data = Buffer.alloc(3 * 1024 * 1024, 7);
    await writeFully(handle, data, 5);
    const writes = new BackgroundWrites(handle, (error) => error);
    writes.write(Buffer.from('abc'), 0);
    await writes.settled();
    writes.check();
    await handle.close();
    const written = await readFile(path);
    expect(written.length).toBe(data.length + 5);
    expect(written.subarray(0, 3).toString()).toBe('abc');

    const readOnly = await open(path, 'r');
    const mapped = new Error('mapped');
    const failing = new BackgroundWrites(readOnly, () => mapped);
    let settled = 0;
    failing.write(Buffer.from('x'), 0, () => settled++);
    failing.write(Buffer.from('y'), 1, () => settled++);
    await failing.settled();
    await readOnly.close();
    expect(settled).toBe(2);
    expect(failing.failed).toBe(true);
    expect(() => failing.check()).toThrow(mapped);
  });
});
