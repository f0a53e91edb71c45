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
