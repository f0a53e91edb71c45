import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerSearch } from '../../src/cli/commands/search.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { searchArchives } from './search-archive-fixture.js';
import { python } from '../helpers/tools.js';

const run = promisify(execFile);

/** Prototype 17's index part replaced by lines no export writes (Python's zipfile writes the zip). */
const HOSTILE_PART = `
import sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
lines = [
    'rabbitSearchPart("17",[',
    '["element","text","page1","","e1","x.html","harmless","zebra claims a match"],',
    'not json at all zebra',
    '["element","text","page1","","e2","x.html","' + 'zebra ' * 60000 + '","zebra"],',
    '["nonsense","text","page1","","e3","x.html","zebra","zebra"],',
    '["element","text","page1","","e4","x.html","a real zebra \\\\u001b[2J","a real zebra"],',
    ']);',
]
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED) as zout:
    for info in zin.infolist():
        data = zin.read(info)
        if info.filename == 'search/prototype-17.js':
            data = '\\n'.join(lines).encode('utf-8')
        zout.writestr(info, data)
`;

describe('search with an index that was tampered with', () => {
  let hostile: string;

  beforeAll(async () => {
    const dir = await tempDir();
    const { archive } = await searchArchives(dir);
    hostile = join(dir, 'hostile.zip');
    await run(python(), ['-c', HOSTILE_PART, archive, hostile]);
  });

  it('makes a hit only of a record whose own text holds the query, and skips what is not a record', async () => {
    const result = await runCli(['search', hostile, 'zebra', '--json'], { register: registerSearch });
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({ type: 'hit', id: 'e4', before: 'a real ', match: 'zebra', after: ' \u001b[2J' }),
      expect.objectContaining({ type: 'summary', hits: 1 }),
    ]);
    // eslint-disable-next-line no-control-regex
    expect(result.stdout).not.toMatch(/\u001b/);
  });
});
