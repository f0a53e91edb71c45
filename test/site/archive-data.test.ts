import { describe, expect, it } from 'vitest';
import { summarizePrototype } from '../../src/site/archive-data.js';
import type { StoredFile } from '../../src/storage/stored-file.js';

const file = (path: string, text: string): StoredFile => ({ path, data: Buffer.from(text, 'utf8') }) as StoredFile;
const read = async (f: StoredFile): Promise<Buffer> => f.data as Buffer;

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
