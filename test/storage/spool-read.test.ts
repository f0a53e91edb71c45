import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bufferChunks } from '../../src/core/read-chunks.js';
import { Spool } from '../../src/storage/spool.js';
import { tempDir } from '../helpers/temp.js';

describe('Spool reads', () => {
  it('gives the same bytes with blocking reads as with async ones, from memory, from the pack on disk and from a body of its own', async () => {
    const spool = new Spool(join(await tempDir(), 'spool'));
    await spool.init();
    const bodies = Array.from({ length: 400 }, (_, i) => Buffer.from(`${i}:${'é'.repeat(i * 20)}`, 'utf8'));
    // Over 1 MiB in all: the first bodies are written to the pack file by the time they are read.
    const written = [];
    for (const body of bodies)
      written.push(await spool.write(bufferChunks(body), { maxBytes: 1 << 30, source: 'test' }));
    const large = Buffer.alloc(300 * 1024, 7);
    written.push(await spool.write(bufferChunks(large), { maxBytes: 1 << 30, source: 'large' }));
    bodies.push(large);
    expect(written.at(-1)?.offset).toBeUndefined();
    const wrong: number[] = [];
    for (const [index, body] of written.entries()) {
      const ref = spool.refOf(body);
      const expected = bodies[index] as Buffer;
      if (!(await spool.readBlocking(ref)).equals(expected) || !(await spool.read(ref)).equals(expected))
        wrong.push(index);
    }
    expect(wrong).toEqual([]);
    await spool.close();
  });
});
