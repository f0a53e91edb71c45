import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bufferChunks } from '../../src/core/read-chunks.js';
import { JournalCache, JournalWriter, readJournal } from '../../src/storage/journal.js';
import { Spool } from '../../src/storage/spool.js';
import { tempDir } from '../helpers/temp.js';

const BASE = 'https://rabbit.test';

async function body(spool: Spool, text: string) {
  const spooled = await spool.write(bufferChunks(Buffer.from(text)), { maxBytes: 1 << 20, source: text });
  return {
    path: `p/${text}`,
    source: `/rabbit/api/${text}`,
    sha256: spooled.sha256,
    size: spooled.size,
    contentType: 'application/json',
    lastModified: null,
    file: spooled.file,
    ...(spooled.offset !== undefined ? { offset: spooled.offset } : {}),
  };
}

/** A new journal for BASE in a fresh folder, with an open spool beside it. */
async function newJournal(): Promise<{ path: string; spool: Spool; writer: JournalWriter }> {
  const dir = await tempDir();
  const path = join(dir, 'journal.jsonl');
  const spool = new Spool(join(dir, 'spool'));
  await spool.init();
  return { path, spool, writer: await JournalWriter.open(path, BASE, true, spool) };
}

describe('journal', () => {
  it('indexes records by prototype, reads one prototype when asked, and survives a torn last line', async () => {
    const { path, spool, writer } = await newJournal();
    const protos = ['3', '17'].map((id) => ({ id, key: 'k', revision: 2, lastModification: 5 }));
    for (let i = 0; i < 50; i++) writer.record(await body(spool, `a${i}`), protos[i % 2] as (typeof protos)[number]);
    await writer.close();
    await spool.close();
    // A kill mid-write leaves half a line.
    await appendFile(path, '{"t":"file","proto":"3","rev":2,"lm":5,"sou');

    const state = await readJournal(path, BASE);
    expect(state.records).toBe(50);
    expect([...state.spans.keys()].sort()).toEqual(['17', '3']);
    await spool.init();
    const cache = new JournalCache(state, spool);
    const hit = await cache.lookup('/rabbit/api/a4', protos[0] as (typeof protos)[number]);
    expect(hit?.fresh).toBe(true);
    expect((await spool.read(await (hit as NonNullable<typeof hit>).load())).toString()).toBe('a4');
    expect(await cache.lookup('/rabbit/api/a4', protos[1] as (typeof protos)[number])).toBeUndefined();
    expect(
      await cache.lookup('/rabbit/api/a4', { ...(protos[0] as (typeof protos)[number]), revision: 3 }),
    ).toBeUndefined();

    // The next run appends after the torn line without gluing its first record onto it.
    const again = await JournalWriter.open(path, BASE, false, spool);
    again.record(await body(spool, 'late'), protos[1] as (typeof protos)[number]);
    await again.close();
    await spool.close();
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines.at(-2)).toContain('"source":"/rabbit/api/late"');
    const reread = await readJournal(path, BASE);
    // The torn line ends what is trusted: records after it are not read as this run's.
    expect(reread.records).toBe(50);
  });

  it('indexes a journal longer than one read, with records and characters cut at the read edges', async () => {
    const { path, spool, writer } = await newJournal();
    const protos = ['3', '17', '4711'].map((id) => ({ id, key: 'k', revision: 2, lastModification: 5 }));
    // Some 1.2 MB of records whose lengths vary and whose content types hold multi-byte characters.
    const count = 3000;
    for (let i = 0; i < count; i++) {
      const file = {
        ...(await body(spool, `b${i}`)),
        contentType: `application/json; note="${'日本語🐇'.repeat(i % 7)}${'x'.repeat(300 + (i % 13))}"`,
      };
      writer.record(file, protos[i % 3] as (typeof protos)[number]);
    }
    await writer.close();
    await spool.close();
    expect((await readFile(path)).length).toBeGreaterThan(3 * 256 * 1024);

    const state = await readJournal(path, BASE);
    expect(state.records).toBe(count);
    await spool.init();
    const cache = new JournalCache(state, spool);
    // Records from the start, the middle and the end of the file, each found through its span.
    for (const i of [0, 1, 1234, 2000, count - 1]) {
      const hit = await cache.lookup(`/rabbit/api/b${i}`, protos[i % 3] as (typeof protos)[number]);
      expect(hit?.fresh, `b${i}`).toBe(true);
      expect((await spool.read(await (hit as NonNullable<typeof hit>).load())).toString()).toBe(`b${i}`);
    }
    await spool.close();
  });

  it('sets aside a journal written for another service', async () => {
    const dir = await tempDir();
    const path = join(dir, 'journal.jsonl');
    const writer = await JournalWriter.open(path, 'https://other.test', true, { written: async () => undefined });
    await writer.close();
    const state = await readJournal(path, BASE);
    expect(state.setAside).toMatch(/another service/);
    expect(state.records).toBe(0);
  });

  it('names no body before its bytes are written: a kill at any moment leaves every named body on disk', async () => {
    const { path, spool, writer } = await newJournal();
    const proto = { id: '3', key: 'k', revision: 2, lastModification: 5 };
    // Each time the journal file grows, what it names is checked against the pack's bytes on disk
    // (what a kill -9 at that moment would leave). 600 records fill the journal's batch (64 KiB)
    // twice, long before the pack's batch (1 MiB) or its clock would write the bodies.
    let checks = 0;
    let seen = 0;
    const named = async (): Promise<void> => {
      const text = await readFile(path, 'utf8');
      if (text.length === seen) return;
      seen = text.length;
      const pack = await readFile(spool.packPath);
      // Whole lines only: a batch being written may be half there, and the journal's reader drops a
      // torn last line as the resumed run would.
      const whole = text.slice(0, text.lastIndexOf('\n') + 1);
      for (const line of whole.split('\n').filter((each) => each.includes('"t":"file"'))) {
        const { offset, size, source } = JSON.parse(line) as { offset: number; size: number; source: string };
        expect(pack.subarray(offset, offset + size).toString(), source).toBe(source.slice('/rabbit/api/'.length));
      }
      checks++;
    };
    for (let i = 0; i < 600; i++) {
      writer.record(await body(spool, `b${i}`), proto);
      await named();
    }
    await writer.close();
    await named();
    await spool.close();
    expect(checks).toBeGreaterThanOrEqual(3);
  });
});
