import { chmod, chown, lstat, mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isRabbitError } from '../../src/core/errors.js';
import { bufferChunks } from '../../src/core/read-chunks.js';
import { ZipWriter } from '../../src/zip/zip-writer.js';
import { writeSidecar, writeSumsFile } from '../../src/archive/checksum-file.js';
import { writeMetricsFile } from '../../src/monitor/metrics.js';
import { WriteJournal } from '../../src/restore/write-journal.js';
import { openWorkspace } from '../../src/storage/workspace.js';
import { outputPaths } from '../../src/storage/work-dir.js';
import { tempDir } from '../helpers/temp.js';

const NOBODY = 65534;
const BASE = 'http://127.0.0.1:1';

beforeAll(() => {
  if (process.getuid?.() !== 0)
    throw new Error('these tests plant files owned by another user (chown to nobody): run them as root, as CI does');
});

async function refusal(out: string): Promise<unknown> {
  return openWorkspace(out, BASE, false, () => undefined).then(
    async (workspace) => {
      await workspace.close('done');
      return 'opened';
    },
    (error: unknown) => error,
  );
}

/** Every file under `dir` with its mode and owner, to show nothing in it was touched. */
async function snapshot(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of (await readdir(dir, { recursive: true })).sort()) {
    const info = await lstat(join(dir, name));
    const text = info.isFile() ? await readFile(join(dir, name), 'utf8') : '';
    out.push(`${name} ${info.uid} ${(info.mode & 0o7777).toString(8)} ${info.size} ${info.mtimeMs} ${text}`);
  }
  return out;
}

describe('a work folder beside --out that another user made', () => {
  it('is refused, and a symlink planted in it is never followed', async () => {
    const dir = await tempDir();
    await chmod(dir, 0o755);
    const victim = join(dir, 'victim.txt');
    await writeFile(victim, 'mine\n');
    const paths = outputPaths(join(dir, 'team.zip'));
    await mkdir(paths.work, { mode: 0o755 });
    await symlink(victim, paths.entries);
    await chown(paths.work, NOBODY, NOBODY);
    const error = await refusal(paths.out);
    expect(isRabbitError(error, 'UNSAFE_PATH')).toBe(true);
    expect((error as Error).message).toContain(paths.work);
    expect(await readFile(victim, 'utf8')).toBe('mine\n');
    expect(await readdir(paths.work)).toEqual(['entries']);
  });

  it('is refused with its journal and spool unread, so no forged body is resumed from', async () => {
    const dir = await tempDir();
    const paths = outputPaths(join(dir, 'team.zip'));
    await mkdir(join(paths.work, 'spool'), { recursive: true, mode: 0o755 });
    await writeFile(paths.journal, `${JSON.stringify({ t: 'header', v: 1, baseUrl: BASE })}\n`);
    await writeFile(join(paths.spool, 'pack'), 'forged body');
    for (const path of [paths.work, paths.spool, paths.journal, join(paths.spool, 'pack')])
      await chown(path, NOBODY, NOBODY);
    const before = await snapshot(paths.work);
    expect(isRabbitError(await refusal(paths.out), 'UNSAFE_PATH')).toBe(true);
    expect(await snapshot(paths.work)).toEqual(before);
  });

  it('is refused when others may write to it, even if it is ours', async () => {
    const dir = await tempDir();
    const paths = outputPaths(join(dir, 'team.zip'));
    await mkdir(paths.work);
    await chmod(paths.work, 0o777);
    expect(isRabbitError(await refusal(paths.out), 'UNSAFE_PATH')).toBe(true);
  });

  it.each([
    ['a journal that belongs to another user', 'journal'],
    ['a journal that is a symlink', 'journal-link'],
    ['a spool pack that is a symlink', 'pack-link'],
    ['a spool folder that belongs to another user', 'spool'],
  ])('in a work folder of our own, %s is refused and left as it is', async (_, kind) => {
    const dir = await tempDir();
    const victim = join(dir, 'victim.txt');
    await writeFile(victim, 'mine\n');
    const paths = outputPaths(join(dir, 'team.zip'));
    await mkdir(paths.work, { mode: 0o700 });
    if (kind === 'journal') {
      await writeFile(paths.journal, `${JSON.stringify({ t: 'header', v: 1, baseUrl: BASE })}\n`);
      await chown(paths.journal, NOBODY, NOBODY);
    } else if (kind === 'journal-link') {
      await symlink(victim, paths.journal);
    } else if (kind === 'pack-link') {
      await mkdir(paths.spool, { mode: 0o700 });
      await symlink(victim, join(paths.spool, 'pack'));
    } else {
      await mkdir(paths.spool, { mode: 0o755 });
      await chown(paths.spool, NOBODY, NOBODY);
    }
    const before = await snapshot(paths.work);
    expect(isRabbitError(await refusal(paths.out), 'UNSAFE_PATH')).toBe(true);
    expect(await readFile(victim, 'utf8')).toBe('mine\n');
    expect(await snapshot(paths.work)).toEqual(before);
  });
});

describe('under umask 000', () => {
  it('the spool, journal, resume mark, archive, checksums, metrics and restore journal are 0600, folders 0700', async () => {
    const dir = await tempDir();
    const paths = outputPaths(join(dir, 'team.zip'));
    let previous: number;
    try {
      previous = process.umask(0);
    } catch (error) {
      throw new Error('this test sets the umask, which a worker thread cannot: run vitest with forks', {
        cause: error,
      });
    }
    try {
      const workspace = await openWorkspace(paths.out, BASE, false, () => undefined);
      await workspace.spool.write(bufferChunks(Buffer.from('small body')), { maxBytes: 1e9, source: '/a' });
      const large = await workspace.spool.write(bufferChunks(Buffer.alloc(600 * 1024, 7)), {
        maxBytes: 1e9,
        source: '/b',
      });
      workspace.entries.append('p1', 'line');
      const zip = await ZipWriter.create(paths.out);
      await zip.addBuffer({ name: 'a.txt', store: true }, Buffer.from('a'));
      await zip.finish();
      // A run that gave up: its work folder, with everything in it, stays for the next.
      await workspace.close('resumable');
      const sidecar = await writeSidecar(paths.out, 'a'.repeat(64));
      await writeSumsFile(join(dir, 'SHA256SUMS'), new Map([['team.zip', 'a'.repeat(64)]]));
      const metrics = join(dir, 'rabbit.prom');
      await writeMetricsFile(
        metrics,
        { startedMs: 0, endedMs: 1, exitCode: 0, summary: {} },
        { name: 'out', value: paths.out },
      );
      const journal = await WriteJournal.open(
        join(dir, 'restore.journal'),
        { baseUrl: BASE, prototype: '1' },
        { created: new Map(), unfinished: 0 },
      );
      await journal.close();
      const mode = async (path: string): Promise<string> => ((await stat(path)).mode & 0o777).toString(8);
      for (const folder of [paths.work, paths.spool]) expect([folder, await mode(folder)]).toEqual([folder, '700']);
      for (const file of [
        join(paths.spool, 'pack'),
        large.file,
        paths.journal,
        paths.entries,
        paths.resumable,
        paths.out,
        sidecar,
        join(dir, 'SHA256SUMS'),
        metrics,
        join(dir, 'restore.journal'),
      ])
        expect([file, await mode(file)]).toEqual([file, '600']);
    } finally {
      process.umask(previous);
    }
  });
});
