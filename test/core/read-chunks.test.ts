import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { bufferChunks, readChunks } from '../../src/core/read-chunks.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('readChunks', () => {
  it('hands over every chunk in order and resolves at the end', async () => {
    const seen: string[] = [];
    await readChunks(Readable.from([Buffer.from('a'), Buffer.from('bc'), Buffer.from('d')]), (chunk) => {
      seen.push(chunk.toString());
      return undefined;
    });
    expect(seen).toEqual(['a', 'bc', 'd']);
  });

  it('pauses the stream while a returned promise is pending, and ends only after it settles', async () => {
    const stream = new PassThrough();
    const seen: string[] = [];
    let release: () => void = () => undefined;
    let done = false;
    const reading = readChunks(stream, (chunk) => {
      seen.push(chunk.toString());
      if (seen.length > 1) return undefined;
      return new Promise<void>((resolve) => (release = resolve));
    }).then(() => (done = true));
    stream.write('first');
    stream.write('second');
    stream.end();
    await tick();
    expect(seen).toEqual(['first']);
    expect(stream.isPaused()).toBe(true);
    release();
    await reading;
    expect(seen).toEqual(['first', 'second']);
    expect(done).toBe(true);
  });

  it('waits for the last write even when the stream has ended meanwhile', async () => {
    const stream = new PassThrough();
    let release: () => void = () => undefined;
    let done = false;
    const reading = readChunks(stream, () => new Promise<void>((resolve) => (release = resolve))).then(
      () => (done = true),
    );
    stream.end('only');
    await tick();
    await tick();
    expect(done).toBe(false);
    release();
    await reading;
    expect(done).toBe(true);
  });

  it('rejects with what onChunk throws or rejects with, and destroys the stream', async () => {
    const thrown = new PassThrough();
    const reading = readChunks(thrown, () => {
      throw new Error('too large');
    });
    thrown.write('x');
    await expect(reading).rejects.toThrow('too large');
    expect(thrown.destroyed).toBe(true);

    const rejected = new PassThrough();
    const second = readChunks(rejected, () => Promise.reject(new Error('disk full')));
    rejected.write('x');
    await expect(second).rejects.toThrow('disk full');
    expect(rejected.destroyed).toBe(true);
  });

  it("rejects with the stream's own error, and on a close before the end", async () => {
    const failing = new PassThrough();
    const reading = readChunks(failing, () => undefined);
    failing.destroy(new Error('socket hang up'));
    await expect(reading).rejects.toThrow('socket hang up');

    const cut = new PassThrough();
    const cutReading = readChunks(cut, () => undefined);
    cut.write('partial');
    cut.destroy();
    await expect(cutReading).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });

  it('does not wait for events a stream destroyed before the read will never send', async () => {
    const errored = new PassThrough();
    errored.on('error', () => undefined);
    errored.destroy(new Error('aborted first'));
    await tick();
    await expect(readChunks(errored, () => undefined)).rejects.toThrow('aborted first');

    const closed = new PassThrough();
    closed.destroy();
    await tick();
    await expect(readChunks(closed, () => undefined)).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });
});

describe('bufferChunks', () => {
  it('hands over its bytes as one chunk, waits for the reader, and rejects with what it throws', async () => {
    const seen: string[] = [];
    let waited = false;
    await bufferChunks(Buffer.from('page')).read((chunk) => {
      seen.push(chunk.toString());
      return tick().then(() => {
        waited = true;
      });
    });
    expect(seen).toEqual(['page']);
    expect(waited).toBe(true);
    const tooLarge = new Error('too large');
    await expect(
      bufferChunks(Buffer.from('page')).read(() => {
        throw tooLarge;
      }),
    ).rejects.toBe(tooLarge);
  });
});
