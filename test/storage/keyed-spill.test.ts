import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KeyedSpill } from '../../src/storage/keyed-spill.js';
import { tempDir } from '../helpers/temp.js';

describe('KeyedSpill', () => {
  it('gives back each key its own lines in order, across many batches and interleaved keys', async () => {
    const spill = await KeyedSpill.create(join(await tempDir(), 'spill'));
    const expected = new Map<string, string[]>();
    // Enough text for several 1 MiB batches, keys interleaved as a concurrent crawl files them.
    const append = (from: number, to: number): void => {
      for (let i = from; i < to; i++) {
        const key = String(i % 7);
        const line = JSON.stringify({ i, pad: 'x'.repeat(i % 200), text: 'ü🐇\n"' });
        spill.append(key, line);
        const lines = expected.get(key) ?? [];
        lines.push(line);
        expected.set(key, lines);
      }
    };
    // Read halfway through too: reading must not disturb the appends that follow.
    append(0, 15_001);
    expect(await spill.lines('3')).toEqual(expected.get('3'));
    append(15_001, 30_000);
    for (const [key, lines] of expected) {
      expect(spill.count(key)).toBe(lines.length);
      expect(await spill.lines(key)).toEqual(lines);
      expect((await spill.lineBytes(key)).map((bytes) => bytes.toString('utf8'))).toEqual(lines);
    }
    expect(await spill.lines('absent')).toEqual([]);
    expect(await spill.lineBytes('absent')).toEqual([]);
    expect(spill.keys().sort()).toEqual(['0', '1', '2', '3', '4', '5', '6']);
    await spill.close();
  });

  it('reads back lines longer than its read chunk, with multi-byte characters cut at chunk edges', async () => {
    const spill = await KeyedSpill.create(join(await tempDir(), 'spill'));
    // One key's lines span several 256 KiB reads; the odd first byte puts the edges inside characters.
    const lines = ['a' + 'é'.repeat(200_000), 'b' + '日'.repeat(150_000), 'short', 'c🐇'.repeat(70_000), 'end'];
    for (const line of lines) spill.append('k', line);
    spill.append('other', 'x');
    expect(await spill.lines('k')).toEqual(lines);
    expect((await spill.lineBytes('k')).map((bytes) => bytes.toString('utf8'))).toEqual(lines);
    expect(await spill.lines('other')).toEqual(['x']);
    await spill.close();
  });

  it('reads what is not written yet from memory, so a read cuts no key into more pieces on disk', async () => {
    const path = join(await tempDir(), 'spill');
    const spill = await KeyedSpill.create(path);
    // The viewer reads each prototype as it is done while the crawl files the others' lines: a
    // read that wrote the batch out first left every key in as many pieces as there were reads.
    for (let i = 0; i < 50; i++) {
      spill.append(`p${i}`, `{"i":${i},"text":"ü"}`);
      expect(await spill.lines(`p${i}`)).toEqual([`{"i":${i},"text":"ü"}`]);
      expect((await spill.lineBytes(`p${i}`)).map(String)).toEqual([`{"i":${i},"text":"ü"}`]);
    }
    expect((await stat(path)).size).toBe(0);
    // Lines on disk and in memory together, in the order appended.
    const big = 'y'.repeat(300_000);
    for (let i = 0; i < 5; i++) spill.append('p0', `${i}${big}`);
    spill.append('p0', 'last');
    const lines = [`{"i":0,"text":"ü"}`, ...[0, 1, 2, 3, 4].map((i) => `${i}${big}`), 'last'];
    expect(await spill.lines('p0')).toEqual(lines);
    expect((await stat(path)).size).toBeGreaterThan(1_000_000);
    expect((await spill.lineBytes('p0')).map(String)).toEqual(lines);
    const streamed: string[] = [];
    for await (const line of spill.lineStream('p0', 4096)) streamed.push(String(line));
    expect(streamed).toEqual(lines);
    const each: string[] = [];
    for await (const line of spill.eachLine('p0')) each.push(line);
    expect(each).toEqual(lines);
    expect(spill.count('p0')).toBe(7);
    await spill.close();
  });
});
