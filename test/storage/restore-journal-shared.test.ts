import { execFileSync } from 'node:child_process';
import { chown, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isRabbitError } from '../../src/core/errors.js';
import { WriteJournal, readJournal } from '../../src/restore/write-journal.js';
import { tempDir } from '../helpers/temp.js';

const NOBODY = 65534;
const identity = { baseUrl: 'http://127.0.0.1:1', prototype: '7' };
const start = `${JSON.stringify({ t: 'start', ...identity, at: '2026-01-01T00:00:00Z' })}\n`;

beforeAll(() => {
  if (process.getuid?.() !== 0)
    throw new Error('these tests plant files owned by another user (chown to nobody): run them as root, as CI does');
});

describe('the restore journal on a machine shared with other users', () => {
  it('is refused when it is a symlink: neither read nor appended through', async () => {
    const dir = await tempDir();
    const victim = join(dir, 'victim.txt');
    await writeFile(victim, start);
    const path = join(dir, 'restore.journal');
    await symlink(victim, path);
    expect(isRabbitError(await readJournal(path, identity).catch((error: unknown) => error), 'UNSAFE_PATH')).toBe(true);
    const opened = await WriteJournal.open(path, identity, { created: new Map(), unfinished: 0 }).catch(
      (error: unknown) => error,
    );
    expect(isRabbitError(opened, 'UNSAFE_PATH')).toBe(true);
    expect(await readFile(victim, 'utf8')).toBe(start);
  });

  it('is refused when another user owns it, so its "created" records are not trusted', async () => {
    const dir = await tempDir();
    const path = join(dir, 'restore.journal');
    const forged = `${start}${JSON.stringify({ t: 'done', op: 'create', parent: 'p', archived: '1', id: '99' })}\n`;
    await writeFile(path, forged);
    await chown(path, NOBODY, NOBODY);
    expect(isRabbitError(await readJournal(path, identity).catch((error: unknown) => error), 'UNSAFE_PATH')).toBe(true);
    expect(await readFile(path, 'utf8')).toBe(forged);
  });

  it('is told as not a journal when it holds something else, whoever owns it: what it holds is judged first', async () => {
    const dir = await tempDir();
    const path = join(dir, 'notes.txt');
    await writeFile(path, 'their notes\n');
    await chown(path, NOBODY, NOBODY);
    expect(isRabbitError(await readJournal(path, identity).catch((error: unknown) => error), 'NOT_A_JOURNAL')).toBe(
      true,
    );
    expect(await readFile(path, 'utf8')).toBe('their notes\n');
  });

  it('is a usage error, not an unsafe path, when a FIFO is there by the time it is read; the read does not hang', async () => {
    const dir = await tempDir();
    const path = join(dir, 'restore.journal');
    execFileSync('mkfifo', [path]);
    const error = await readJournal(path, identity).catch((caught: unknown) => caught);
    expect(isRabbitError(error, 'USAGE')).toBe(true);
    expect((error as Error).message).toContain('a named pipe (FIFO)');
  });
});
