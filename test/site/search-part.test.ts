import { describe, expect, it } from 'vitest';
import type { ArchivedEntry, PrototypeState } from '../../src/manifest/archive-model.js';
import { parseRecordLine, partHead, PART_TAIL } from '../../src/search/search-record.js';
import { searchPart } from '../../src/site/search-part.js';
import type { BodyRef } from '../../src/storage/spool.js';

const PAGES = 4;
const ELEMENTS = 50;
const FLUSH_BYTES = 2048;

/** One prototype of PAGES pages of ELEMENTS labelled elements, its bodies in memory by path. */
function prototype(): { state: PrototypeState; bodies: Map<string, string> } {
  const prefix = 'prototypes/7/r1/';
  const bodies = new Map<string, string>();
  const pageIds = Array.from({ length: PAGES }, (_, p) => `p${p}`);
  bodies.set(`${prefix}pages.json`, JSON.stringify(pageIds));
  for (const pageId of pageIds) {
    bodies.set(`${prefix}pages/${pageId}.json`, JSON.stringify({ id: pageId, name: `Page ${pageId}`, layers: [] }));
    const ids = Array.from({ length: ELEMENTS }, (_, e) => `e${e}`);
    bodies.set(`${prefix}pages/${pageId}/elements.json`, JSON.stringify(ids));
    for (const id of ids)
      bodies.set(
        `${prefix}pages/${pageId}/elements/${id}.json`,
        JSON.stringify({ id, type: 'label', text: `label ${pageId} ${id} ${'x'.repeat(40)}` }),
      );
  }
  const state: PrototypeState = {
    id: '7',
    name: 'Shop',
    lastModification: null,
    lastUser: null,
    revision: 1,
    milestone: null,
    origin: { mode: 'fetched' },
  };
  return { state, bodies };
}

describe('searchPart', () => {
  it('hands its lines on in chunks of about the flush size while the prototype is still being read', async () => {
    const { state, bodies } = prototype();
    const paths = [...bodies.keys()];
    const entries = (async function* (): AsyncGenerator<ArchivedEntry> {
      for (const path of paths)
        yield {
          path,
          source: `/x/${path}`,
          sha256: '0'.repeat(64),
          size: 1,
          contentType: 'application/json',
          lastModified: null,
        };
    })();
    let elementReads = 0;
    const read = (ref: BodyRef): Promise<Buffer> => {
      if (ref.file.includes('/elements/')) elementReads++;
      return Promise.resolve(Buffer.from(bodies.get(ref.file) as string, 'utf8'));
    };
    // The spool ref of a body is its path here, so the reader can tell which body is asked for.
    const locate = (entry: ArchivedEntry): BodyRef => ({ file: entry.path, size: bodies.get(entry.path)?.length ?? 0 });
    const part = searchPart(state, entries, locate, read, FLUSH_BYTES);

    const chunks: { bytes: number; readsSoFar: number }[] = [];
    const text: string[] = [];
    await part.chunks.read((chunk) => {
      chunks.push({ bytes: chunk.length, readsSoFar: elementReads });
      text.push(chunk.toString('utf8'));
      return undefined;
    });

    const total = PAGES * ELEMENTS;
    expect(elementReads).toBe(total);
    // Many chunks, the first handed on after a page's worth of reads or so, long before the last element.
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks[0]?.readsSoFar).toBeLessThan(total / 2);
    // None holds much more than the flush size: at most the line that crossed it.
    for (const { bytes } of chunks) expect(bytes).toBeLessThan(FLUSH_BYTES + 512);

    // The chunks together are the whole part: its head, one line per record, its tail.
    const lines = text.join('').split('\n');
    expect(`${lines[0]}\n`).toBe(partHead('7'));
    expect(`${lines.at(-2)}\n`).toBe(PART_TAIL);
    const records = lines.slice(1, -2).map((line) => parseRecordLine(line)?.record);
    expect(records.filter((r) => r?.kind === 'element')).toHaveLength(total);
    expect(records.filter((r) => r?.kind === 'page')).toHaveLength(PAGES);
    expect(records[0]).toMatchObject({ kind: 'prototype', text: 'Shop' });
  });
});
