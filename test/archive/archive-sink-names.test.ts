import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ArchiveSink } from '../../src/archive/archive-sink.js';
import { isRabbitError } from '../../src/core/errors.js';
import type { Spool } from '../../src/storage/spool.js';
import type { StoredFile } from '../../src/storage/stored-file.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'archive-sink-names-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A body in memory: the sink never reads the spool for it. */
function body(path: string): StoredFile {
  return {
    path,
    source: `/rabbit/api/${path}`,
    sha256: '0'.repeat(64),
    size: 2,
    contentType: 'application/json',
    lastModified: null,
    file: join(dir, 'unused'),
    data: Buffer.from('{}'),
  };
}

// The zip writer alone refuses only names that escape the extract folder; the archive's own
// names are stricter (api/paths.ts), and the sink holds every entry to them.
it.each(['pages/.hidden', 'a b.json', 'a//b.json', ''])('the archive sink refuses the entry name %j', async (name) => {
  const out = join(dir, 'out.zip');
  const sink = new ArchiveSink(out, { spool: {} as Spool, signal: new AbortController().signal });
  sink.add(body('prototypes.json'));
  sink.add(body(name));
  const failed = await sink.finish((async function* () {})()).then(
    () => 'written',
    (error: unknown) => (isRabbitError(error) ? error.code : error),
  );
  expect(failed).toBe('BAD_ID');
  expect(await readdir(dir)).toEqual([]);
});
