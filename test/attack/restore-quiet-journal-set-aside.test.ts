import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { PROTO, damagedArchiveFixture } from '../restore/restore-helpers.js';

/**
 * A journal of another restore (another service or prototype) where this restore's goes is moved
 * aside to FILE.NNN.old: it is the record of writes made to a live service, and the restore it
 * belongs to needs it back under its name to resume. Since restore's --quiet became export's, the
 * only word of the move (a line on stderr) is left out under -q, and the --json summary never
 * carried it: with -q, the user learns of it nowhere, neither on stdout, nor on stderr, nor in the
 * summary. Export's set-aside progress, the precedent, is its own scratch; this file is not.
 */
const fixture = damagedArchiveFixture({ name: 'night.zip' });
beforeEach(async () => {
  // Another service's restore, interrupted: its journal where this restore's goes by default.
  await writeFile(
    join(fixture.dir, `.night.zip.restore-${PROTO}.jsonl`),
    '{"t":"start","baseUrl":"https://elsewhere.example","prototype":"9","at":"x"}\n',
  );
});

describe("restore -q still says where it moved another restore's journal", () => {
  it.each([[['-q']], [['-q', '--json']], [['--quiet', '--json']]])('with %j', async (flags) => {
    const run = await fixture.restore(flags);
    expect(run.code).toBe(0);
    const moved = (await readdir(fixture.dir)).filter((name) => name.endsWith('.old'));
    expect(moved).toHaveLength(1);
    expect(run.stdout + run.stderr).toContain(moved[0]);
  });
});
