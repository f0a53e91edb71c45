import { describe, expect, it } from 'vitest';
import { summarizePrototype } from '../../src/site/archive-data.js';
import type { BodyRef } from '../../src/storage/spool.js';
import type { StoredFile } from '../../src/storage/stored-file.js';

/** Files whose `file` is the key of their bytes, for a reader that needs no spool. */
const bodies = new Map<string, Buffer>();
const file = (path: string, text: string): StoredFile => {
  bodies.set(path, Buffer.from(text, 'utf8'));
  return { path, file: path, size: Buffer.byteLength(text) } as StoredFile;
};
const read = async (ref: BodyRef): Promise<Buffer> => bodies.get(ref.file) as Buffer;

describe('summarizePrototype', () => {
  it('opens a page by its viewable copy only, never by its raw rendering', async () => {
    const files = [
      file('prototypes/3/r1/prototype.json', '{"prototypeData":{"name":"P"}}'),
      file('prototypes/3/r1/pages.json', '["page1","page2"]'),
      file('prototypes/3/r1/pages/page1.json', '{"name":"One"}'),
      file('prototypes/3/r1/pages/page1.html', '<script>document.title="pwned"</script>'),
      file('prototypes/3/r1/pages/page1.view.html', '<p>one'),
      file('prototypes/3/r1/pages/page2.json', '{"name":"Two"}'),
      file('prototypes/3/r1/pages/page2.html', '<script>document.title="pwned"</script>'),
    ];
    const summary = await summarizePrototype('3', files, true, read);
    expect(summary?.pages.map((p) => [p.id, p.open])).toEqual([
      ['page1', 'prototypes/3/r1/pages/page1.view.html'],
      ['page2', undefined],
    ]);
  });
});

describe('summarizePrototype, of hostile bodies', () => {
  it('shows a page listed twice once, and counts the elements a list names once each, ids only', async () => {
    const files = [
      file('prototypes/4/r1/pages.json', '["page1","page2","page1"]'),
      file('prototypes/4/r1/pages/page1.json', '{"name":"One"}'),
      file('prototypes/4/r1/pages/page1/elements.json', '["element1","element1","../x","element2"]'),
      file('prototypes/4/r1/pages/page2.json', '["not","an","object"]'),
      file('prototypes/4/r1/discussions/5.json', '{"pageId":"page1","title":"Why"}'),
    ];
    const summary = await summarizePrototype('4', files, true, read);
    expect(summary?.pages.map((p) => [p.id, p.name, p.elementCount, p.discussions.length])).toEqual([
      ['page1', 'One', 2, 1],
      ['page2', null, null, 0],
    ]);
    expect(summary?.otherDiscussions).toEqual([]);
  });

  it('does not read a body larger than the reader takes', async () => {
    const huge = { ...file('prototypes/5/r1/pages/page1.json', '{"name":"huge"}'), size: 2 ** 40 };
    const files = [file('prototypes/5/r1/pages.json', '["page1"]'), huge];
    const asked: string[] = [];
    const counting = async (ref: BodyRef): Promise<Buffer> => {
      asked.push(ref.file);
      return read(ref);
    };
    const summary = await summarizePrototype('5', files, true, counting);
    expect(summary?.pages.map((p) => [p.id, p.name])).toEqual([['page1', null]]);
    expect(asked).not.toContain(huge.file);
  });
});
