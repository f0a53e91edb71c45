import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { readArchive } from '../helpers/archive.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { writeZip } from '../helpers/write-zip.js';
import { exportSample } from './helpers.js';

/**
 * Older archives keep a prototype's page list in the object form (`{"page2200": "name"}`), whose
 * keys someone can set to anything. A key that is no page id of the service's shape (`count`, of
 * letters alone) is read as the other readers read it: a page whose files the archive lacks, told
 * and left out of what needs them; a key that is no id at all (`no page`) is told and skipped.
 * Every format converts the rest; none fails the run on it.
 */
const KEYS = { count: '3', 'no page': 'x' };

let dir: string;
let archive: string;
let crafted: string;
let pageIds: string[];
let listEntry: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-page-keys-'));
  archive = await exportSample(dir);
  const { manifest, entries } = await readArchive(archive);
  const proto = manifest.prototypes['3']!;
  const files = proto.revisions[String(proto.revision)]!.files;
  const list = files.find((file) => file.path.endsWith('/pages.json'))!;
  listEntry = list.path;
  pageIds = JSON.parse(entries.get(list.path)!.data.toString('utf8')) as string[];
  const data = Buffer.from(JSON.stringify({ ...Object.fromEntries(pageIds.map((id) => [id, id])), ...KEYS }));
  entries.set(list.path, { data, method: 8 });
  list.size = data.length;
  list.sha256 = createHash('sha256').update(data).digest('hex');
  entries.set('manifest.json', { data: Buffer.from(JSON.stringify(manifest)), method: 8 });
  crafted = join(dir, 'old-list.zip');
  await writeZip(
    [...entries].map(([name, { data: bytes }]) => ({ name, data: bytes, store: false })),
    crafted,
  );
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('convert of an archive whose old-style pages.json holds keys that are no page ids', () => {
  it.each(['drawio', 'pdf', 'svg', 'excalidraw'] as const)(
    '--to %s draws every page and tells the key that is no page, and the one that is no id',
    async (to) => {
      const report = await convertArchive({ archive: crafted, out: await tempDir(), to, prototypes: ['3'] });
      const three = report.prototypes[0]!;
      expect(three.file).not.toBeNull();
      expect(three.complete).toBe(false);
      expect(three.skipped).toEqual(
        expect.arrayContaining([
          { what: 'page count', why: expect.stringContaining('pages/count.json is not in the archive') as unknown },
          { what: 'page no page', why: `${listEntry} lists "no page", which is not a page id` },
        ]),
      );
    },
  );

  it('--to wacz lists every page that has a rendering and notes the one without, as for any page', async () => {
    const [before, after] = await Promise.all(
      [archive, crafted].map(async (from) => convertArchive({ archive: from, out: await tempDir(), to: 'wacz' })),
    );
    expect(before!.package?.pages).toBeGreaterThan(0);
    expect(after!.package?.pages).toBe(before!.package?.pages);
    expect(after!.notes).toContain('1 pages have no XHTML rendering in the archive and are not listed for replay');
  });

  it('--to bagit packages the archive as it is', async () => {
    const report = await convertArchive({ archive: crafted, out: await tempDir(), to: 'bagit' });
    expect(report.complete).toBe(true);
  });

  it('rabbit-export convert --to wacz writes the package and exits 0', async () => {
    const out = join(await tempDir(), 'wacz');
    const run = await runCli(['convert', crafted, '--to', 'wacz', '--out', out], { register: registerConvert });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(await readdir(out)).toContain('old-list.wacz');
  });
});
