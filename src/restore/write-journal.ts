import { constants, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { lstat, rename, stat } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { RabbitError, isRabbitError } from '../core/errors.js';
import { SYMLINK, closedOnFailure, openOwnFile, unsafePath } from '../core/private-files.js';
import { normalizeId } from '../api/ids.js';
import { isPlainObject } from '../api/parse.js';
import type { PlannedWrite } from './plan.js';

/**
 * Every write of a restore, recorded before it is sent and again when its answer is in, one JSON
 * line each and synced to disk before the request goes out. After Ctrl-C or kill -9 the next run
 * reads it back: a create that finished maps its archived id to the new one, so the element is
 * compared rather than created again; a write that began and never finished is counted, and the
 * next run's plan (made from what is live now, by content) settles it.
 */
export interface JournalIdentity {
  baseUrl: string;
  prototype: string;
}

export interface JournalState {
  /** `${parent} ${archivedId}` -> the id the element was created under. */
  created: Map<string, string>;
  /** Writes that began and have no recorded outcome: their answers were lost. */
  unfinished: number;
  /** An earlier journal for another service or prototype was moved aside to this path. */
  setAside?: string;
}

type Record =
  | { t: 'start'; baseUrl: string; prototype: string; at: string }
  | {
      t: 'begin' | 'done' | 'failed';
      op: PlannedWrite['op'];
      parent: string;
      archived?: string;
      id?: string;
      status?: number;
    };

export function createdKey(parent: string, archivedId: string): string {
  return `${parent} ${archivedId}`;
}

/** How much of a file is read to find its first line: a start record is a few hundred bytes. */
const START_LINE_MAX = 64 * 1024;

/** The option the journal's path is chosen with: every refusal's next step names it, never `rm`. */
const FLAG = '--journal';
const WHAT = 'the restore journal';

/**
 * Refuses, before anything is written or sent: a journal in a folder that does not exist (the
 * lock beside it could not be made); a path that is the archive itself (a hard link or a symlink
 * to it too); a folder, device or FIFO, which are no journal, and a path that could name only a
 * folder (empty, or ending in a slash, `.` or `..`); a file with something in it that is not a
 * restore journal, which appending would destroy. An empty file, or none, is a new journal.
 */
export async function checkJournalPath(path: string, archive: string): Promise<void> {
  // Read as stdout (as `--out -` is), but a journal is read back to resume: it would be a file named '-'.
  if (path === '-')
    throw namesNoFile(path, '- stands for stdout elsewhere, and a journal is appended to and read back');
  await checkParent(path);
  if (await sameFile(path, archive)) throw isTheArchive(path, archive);
  const found = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw unreadable(path, error);
  });
  if (found === undefined) {
    // Nothing there, but the path names no file that could be made: its lock would go astray.
    if (!namesAFile(path)) throw noFileName(path);
    return;
  }
  if (found.isSymbolicLink()) throw unsafePath(WHAT, path, SYMLINK, { flag: FLAG });
  if (!found.isFile()) throw notAFile(path, found);
  const handle = await openJournal(path);
  await handle?.close();
}

/**
 * What an earlier run left; an absent journal is an empty one. One that is a symlink, not the
 * user's own or writable by others is refused: it decides which elements count as created. So is
 * one that is not a restore journal at all (checkJournalPath).
 */
export async function readJournal(path: string, identity: JournalIdentity): Promise<JournalState> {
  const handle = await openJournal(path);
  if (handle === undefined) return { created: new Map(), unfinished: 0 };
  let text: string;
  try {
    // Read from the start: openJournal's look at the first line reads at a position and moves none.
    text = await handle.readFile('utf8');
  } catch (error) {
    throw unreadable(path, error);
  } finally {
    await handle.close();
  }
  const records = parseLines(text);
  const first = records[0];
  // A journal of another restore (another service or prototype) is the user's record: kept, aside.
  if (first?.t === 'start' && (first.baseUrl !== identity.baseUrl || first.prototype !== identity.prototype)) {
    return { created: new Map(), unfinished: 0, setAside: path };
  }
  const created = new Map<string, string>();
  const open = new Map<string, number>();
  for (const record of records) {
    if (record.t === 'start') continue;
    const key = `${record.op} ${record.parent} ${record.archived ?? record.id ?? ''}`;
    if (record.t === 'begin') open.set(key, (open.get(key) ?? 0) + 1);
    else open.set(key, Math.max(0, (open.get(key) ?? 0) - 1));
    const id = normalizeId('element', record.id);
    const archived = normalizeId('element', record.archived);
    if (record.t === 'done' && record.op === 'create' && id !== undefined && archived !== undefined) {
      created.set(createdKey(record.parent, archived), id);
    }
  }
  return { created, unfinished: [...open.values()].reduce((sum, n) => sum + n, 0) };
}

export class WriteJournal {
  private constructor(private readonly handle: FileHandle) {}

  /**
   * Opens for appending; a journal of another service or prototype is renamed aside first. With
   * `archive`, the file opened is checked again not to be it: the path may have been made a link
   * to it since checkJournalPath looked.
   */
  static async open(
    path: string,
    identity: JournalIdentity,
    state: JournalState,
    archive?: string,
  ): Promise<WriteJournal> {
    if (state.setAside !== undefined) {
      const aside = `${path}.${Date.now()}.old`;
      // Appending to another restore's journal would mix two records: when it cannot be moved, the run stops.
      await rename(path, aside).catch((error: NodeJS.ErrnoException) => {
        throw new RabbitError(
          'OUTPUT_UNWRITABLE',
          `cannot move the journal of another restore at ${path} aside to ${aside}: ${error.code ?? 'failed'}`,
          { data: { journal: path } },
        );
      });
      state.setAside = aside;
    }
    let handle: FileHandle;
    try {
      // Appended to only when it is the user's own regular file (never through a symlink); made 0600.
      handle = await openOwnFile(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, WHAT, {
        more: { flag: FLAG },
      });
    } catch (error) {
      if (isRabbitError(error)) throw error;
      throw new RabbitError(
        'OUTPUT_UNWRITABLE',
        `cannot write the restore journal ${path}: ${(error as NodeJS.ErrnoException).code ?? 'unwritable'}`,
        { data: { journal: path } },
      );
    }
    const journal = new WriteJournal(handle);
    // A full disk at the first line: no journal is handed back to close the file.
    await closedOnFailure(handle, async () => {
      const opened = await handle.stat();
      if (archive !== undefined && isOneFile(opened, await stat(archive).catch(() => undefined)))
        throw isTheArchive(path, archive);
      if (opened.size === 0) {
        await journal.append({
          t: 'start',
          baseUrl: identity.baseUrl,
          prototype: identity.prototype,
          at: new Date().toISOString(),
        });
      }
    });
    return journal;
  }

  begin(write: PlannedWrite): Promise<void> {
    return this.append({ t: 'begin', ...fields(write) });
  }

  /** The outcome; for a create, `id` is the new element's id. */
  done(write: PlannedWrite, id?: string): Promise<void> {
    return this.append({ t: 'done', ...fields(write), ...(id !== undefined ? { id } : {}) });
  }

  failed(write: PlannedWrite, status?: number): Promise<void> {
    return this.append({ t: 'failed', ...fields(write), ...(status !== undefined ? { status } : {}) });
  }

  close(): Promise<void> {
    return this.handle.close();
  }

  private async append(record: Record): Promise<void> {
    await this.handle.write(`${JSON.stringify(record)}\n`);
    // On disk before the request leaves: a kill -9 or a power cut must not lose a begun write.
    await this.handle.datasync();
  }
}

function fields(write: PlannedWrite): { op: PlannedWrite['op']; parent: string; archived?: string; id?: string } {
  if (write.op === 'create') return { op: 'create', parent: write.parent, archived: write.archivedId };
  if (write.op === 'update') return { op: 'update', parent: write.parent, archived: write.archivedId, id: write.id };
  return { op: 'delete', parent: write.parent, id: write.id };
}

/**
 * The journal at `path` to read, undefined when there is none or it is empty. What it holds is
 * looked at first: a file whose first line is not a journal's start record (the first line is
 * written and synced before any other, so every journal of a restore has one) is refused as not a
 * journal, whoever owns it; one that is a journal is then trusted only when it is the user's own.
 */
async function openJournal(path: string): Promise<FileHandle | undefined> {
  let size = 0;
  const inspect = async (handle: FileHandle, found: Stats): Promise<void> => {
    // A folder, device or FIFO (one put there since checkJournalPath) is no journal: a usage error, read no further.
    if (!found.isFile()) throw notAFile(path, found);
    size = found.size;
    if (size > 0 && !(await startsAsJournal(handle, path))) {
      throw new RabbitError(
        'NOT_A_JOURNAL',
        `${path} is not a restore journal (its first line is not a journal's start record); it was left as it is, and nothing was written`,
        { data: { path } },
      );
    }
  };
  let handle: FileHandle;
  try {
    // It decides which elements count as created: another user's, or one others may write, is not trusted.
    handle = await openOwnFile(path, constants.O_RDONLY, WHAT, { more: { flag: FLAG }, inspect, mendMode: '600' });
  } catch (error) {
    if (isRabbitError(error)) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadable(path, error);
  }
  if (size > 0) return handle;
  await handle.close();
  return undefined;
}

async function startsAsJournal(handle: FileHandle, path: string): Promise<boolean> {
  const head = Buffer.alloc(START_LINE_MAX);
  try {
    const { bytesRead } = await handle.read(head, 0, START_LINE_MAX, 0);
    return isStartLine(head.subarray(0, bytesRead));
  } catch (error) {
    throw unreadable(path, error);
  }
}

/** A journal in a folder that is not there is refused before the lock beside it is made. */
async function checkParent(path: string): Promise<void> {
  const parent = dirname(resolve(path));
  const info = await stat(parent).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    // A file on the way (team.zip/journal): no folder is there to create.
    if (error.code === 'ENOTDIR') return 'not a folder' as const;
    throw unreadable(path, error);
  });
  if (info === undefined) {
    throw new RabbitError('OUTPUT_PARENT_MISSING', `${FLAG} ${path}: the folder ${parent} does not exist`, {
      data: { path, parent },
    });
  }
  if (info === 'not a folder' || !info.isDirectory()) {
    throw new RabbitError('OUTPUT_KIND', `${FLAG} ${path}: ${parent} is not a folder`, {
      data: { path: parent, expected: 'folder', parentOf: path },
    });
  }
}

/** A folder, a device, a FIFO: not a journal, and nothing the user would want removed for one. */
function notAFile(path: string, stats: Stats): RabbitError {
  const kind = stats.isDirectory()
    ? 'a folder'
    : stats.isFIFO()
      ? 'a named pipe (FIFO)'
      : stats.isCharacterDevice() || stats.isBlockDevice()
        ? 'a device'
        : 'not a regular file';
  return namesNoFile(path, `${path} is ${kind}`);
}

/**
 * Whether `path` can name a file: not empty, and not ending in a slash, `.` or `..`, which name a
 * folder whether or not one is there (and the lock beside such a journal would go inside it).
 */
function namesAFile(path: string): boolean {
  const last = path.split(sep).at(-1);
  return last !== undefined && last !== '' && last !== '.' && last !== '..';
}

function noFileName(path: string): RabbitError {
  return namesNoFile(path, path === '' ? 'it is empty' : `${path} names a folder`);
}

/** The usage error for a --journal that names no file restore can make its journal: `why`, and another name. */
function namesNoFile(path: string, why: string): RabbitError {
  return new RabbitError('USAGE', `${FLAG} names a file: ${why}`, {
    data: { path, next: `name a new file with ${FLAG}, e.g. ${FLAG} restore.jsonl` },
  });
}

function isTheArchive(path: string, archive: string): RabbitError {
  return new RabbitError(
    'NOT_A_JOURNAL',
    `the restore journal ${path} is the archive being restored; the journal is never written into it`,
    { data: { path, archive } },
  );
}

/** Whether `head`, the first bytes of a file, begins with a whole line that is a start record. */
function isStartLine(head: Buffer): boolean {
  const end = head.indexOf(0x0a);
  return end >= 0 && parseRecord(head.subarray(0, end).toString('utf8'))?.t === 'start';
}

/** Whether two paths name one file (hard links, symlinks and `..` seen through); false when either is missing. */
async function sameFile(a: string, b: string): Promise<boolean> {
  const [first, second] = await Promise.all([stat(a).catch(() => undefined), stat(b).catch(() => undefined)]);
  return isOneFile(first, second);
}

/** Whether two stats are of one file; false when either is missing. */
function isOneFile(a: Stats | undefined, b: Stats | undefined): boolean {
  return a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino;
}

function unreadable(path: string, error: unknown): RabbitError {
  return new RabbitError(
    'OUTPUT_UNWRITABLE',
    `cannot read the restore journal ${path}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`,
    { data: { journal: path } },
  );
}

/** Lines that parse; a line torn by a kill in mid-write is the last one and is dropped. */
function parseLines(text: string): Record[] {
  const records: Record[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const record = parseRecord(line);
    if (record !== undefined) records.push(record);
  }
  return records;
}

/**
 * One line of a journal as its record, or undefined: a torn line, or one that is no record. This
 * is the one rule of what a start record is (it names the service and the prototype), by which a
 * file is told to be a journal at all and a journal to be of this restore or another.
 */
function parseRecord(line: string): Record | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    // A torn line carries nothing a later run could rely on.
    return undefined;
  }
  if (!isPlainObject(value) || typeof value['t'] !== 'string') return undefined;
  if (value['t'] === 'start' && (typeof value['baseUrl'] !== 'string' || typeof value['prototype'] !== 'string'))
    return undefined;
  return value as Record;
}
