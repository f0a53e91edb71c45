import {
  NOT_OFFERED_EXAMPLES,
  type FileEntry,
  type ForeignReference,
  type ManifestError,
  type Milestone,
  type NotOffered,
  type PrototypeOrigin,
} from './types.js';
import { compareByIdKey, compareIds, idSortKey } from '../api/ids.js';
import { entryKindOf, isElementBody, type EntryName } from '../api/paths.js';
import { jsonNumber } from '../core/json-text.js';
import { entryMembersText } from '../storage/file-entry.js';
import type { StoredFile } from '../storage/stored-file.js';
import { parseSource } from '../api/entry-paths.js';
import { RESOURCE_KINDS } from '../api/resource-kinds.js';

/** A file entry as read back from the model: `offset` says where in the pack its body is, if it is. */
export type ArchivedEntry = FileEntry & { offset?: number };

/** Where the model files its records: lines under a key, on disk (storage/keyed-spill.ts). */
export interface LineStore {
  append(key: string, line: string): void;
  lines(key: string): Promise<string[]>;
  /** The same lines as UTF-8 bytes, without their newlines. */
  lineBytes(key: string): Promise<Buffer[]>;
  /** The same again, `chunkBytes` at a time rather than all at once. */
  lineStream(key: string, chunkBytes?: number): AsyncIterable<Buffer>;
  /** Files lines that are already bytes (without newlines) under the key. */
  appendLines(key: string, lines: readonly Buffer[]): void;
  /** How many lines were filed under the key. */
  count(key: string): number;
}

export interface PrototypeState {
  id: string;
  name: string | null;
  lastModification: number | null;
  lastUser: string | null;
  revision: number;
  milestone: Milestone | null;
  origin: PrototypeOrigin;
}

interface PrototypeTally extends PrototypeState {
  files: number;
  bytes: number;
  errors: number;
  /** Files downloaded by this run (or an interrupted run it resumes), metadata aside. */
  downloaded: number;
  /** Archives that files were copied from (export --since). */
  reusedFrom: Set<string>;
}

/** Where the path starts in a filed line: `{"path":"`. */
const PATH_AT = '{"path":"'.length;

/** The key of entries outside any prototype (prototypes.json, assets, index.html). */
const TOP = '';
const errorKey = (owner: string): string => `!${owner}`;
const elementShelf = (owner: string): string => `${owner}:elements`;
/** Where the sorted runs of one read of a big prototype's lines are filed (see sortedLines). */
const runKey = (read: number, run: number): string => `#run/${read}/${run}`;

/**
 * How many of a prototype's lines are sorted in memory at once. One prototype can hold hundreds of
 * thousands of files: its lines are then sorted in runs of this many, each filed back on disk, and
 * the runs merged as they are read, so memory holds one run, not the prototype. Runs of 8,192 keep
 * their sort keys young enough to die in the young generation: a manifest of one 250,000-file
 * prototype peaked at 20 MB of heap with them, 52 MB with runs of 16,384.
 */
export const SORT_RUN_LINES = 8192;
/** Read at a time from each run while they are merged: a few dozen runs are open at once. */
const RUN_READ_BYTES = 64 * 1024;

/** Which of a prototype's files to read back: all of them unless `elementBodies` is false. */
export interface FileSelection {
  elementBodies?: boolean;
}

/**
 * What the run has archived so far. Per prototype it keeps a few counters in memory; every file
 * entry and error goes to a line store on disk, so memory does not grow with the number of
 * resources. Read back one prototype at a time (the manifest, the offline viewer).
 */
export class ArchiveModel {
  readonly foreignReferences: ForeignReference[] = [];
  private readonly prototypes = new Map<string, PrototypeTally>();
  private top = { errors: 0 };
  private fileTotal = 0;
  private sortedReads = 0;

  /** `onAdd` hears of every file the moment it is accepted (the zip is written as the crawl goes). */
  constructor(
    private readonly store: LineStore,
    private readonly onAdd: (file: StoredFile) => void = () => undefined,
    /** Applied to every error message before it is kept (keys out). */
    private readonly redact: (text: string) => string = (text) => text,
    private readonly sortRunLines: number = SORT_RUN_LINES,
  ) {}

  addPrototype(state: PrototypeState): void {
    this.prototypes.set(state.id, { ...state, files: 0, bytes: 0, errors: 0, downloaded: 0, reusedFrom: new Set() });
  }

  /**
   * Notes where a prototype's file came from: an earlier archive's name, or undefined if
   * downloaded; its own metadata aside (`downloaded` counts without it). Told by the kind the
   * crawl gave the file, not by its name.
   */
  noteOrigin(prototypeId: string, file: EntryName, archive: string | undefined): void {
    const state = this.prototypes.get(prototypeId);
    if (!state || entryKindOf(file) === 'prototype') return;
    if (archive === undefined) state.downloaded++;
    else state.reusedFrom.add(archive);
  }

  hasPrototype(id: string): boolean {
    return this.prototypes.has(id);
  }

  /**
   * Adds a file. Each entry name is added once: the crawl asks for every resource once (lists are
   * deduplicated as they are parsed) and the zip writer refuses a name it has already written.
   */
  addFile(prototypeId: string | undefined, file: StoredFile): void {
    this.fileTotal++;
    if (prototypeId !== undefined) {
      const state = this.prototypes.get(prototypeId);
      if (!state) throw new Error(`internal: file for unknown prototype ${prototypeId}`);
      state.files++;
      state.bytes += file.size;
    }
    // A prototype's element bodies on a shelf of their own: the offline viewer reads the rest
    // without reading (and decoding) them, which are most of the lines.
    const shelf = prototypeId === undefined ? TOP : isElementBody(file) ? elementShelf(prototypeId) : prototypeId;
    this.store.append(shelf, entryLine(file));
    this.onAdd(file);
  }

  /** A resource the service does not offer: counted by kind, not an error (see NotOffered). */
  addNotOffered(source: string, status: number): void {
    const parsed = parseSource(source);
    const key = (parsed && RESOURCE_KINDS[parsed.kind].format) ?? 'other';
    let entry = this.notOfferedByKind.get(key);
    if (entry === undefined) this.notOfferedByKind.set(key, (entry = { kind: key, status, count: 0, examples: [] }));
    entry.count++;
    if (entry.examples.length < NOT_OFFERED_EXAMPLES) entry.examples.push(source);
  }

  get notOffered(): NotOffered[] {
    return [...this.notOfferedByKind.values()];
  }

  private readonly notOfferedByKind = new Map<string, NotOffered>();

  /** Records an error against the prototype its source belongs to (or the account as a whole). */
  addError(error: ManifestError): void {
    const owner = ownerOf(error.source);
    const state = owner === undefined ? undefined : this.prototypes.get(owner);
    if (state) state.errors++;
    else this.top.errors++;
    this.store.append(
      errorKey(state ? state.id : TOP),
      JSON.stringify({
        ...error,
        source: this.redact(error.source),
        ...(error.id === undefined ? {} : { id: this.redact(error.id) }),
        message: this.redact(error.message),
      }),
    );
  }

  /** A text the manifest records (a URL, a source) with the run's keys taken out. */
  clean(text: string): string {
    return this.redact(text);
  }

  get fileCount(): number {
    return this.fileTotal;
  }

  get errorCount(): number {
    let count = this.top.errors;
    for (const state of this.prototypes.values()) count += state.errors;
    return count;
  }

  /** Prototype ids in archive order (numeric). */
  prototypeIds(): string[] {
    return [...this.prototypes.keys()].sort(compareIds);
  }

  prototype(id: string): (PrototypeState & { complete: boolean; files: number; bytes: number }) | undefined {
    const state = this.prototypes.get(id);
    if (!state) return undefined;
    return { ...state, origin: originOf(state), complete: state.errors === 0 };
  }

  /** How many prototypes there are, and how many were copied from an earlier archive or fetched. */
  origins(): { total: number; reused: number; fetched: number } {
    let reused = 0;
    for (const state of this.prototypes.values()) if (originOf(state).mode === 'reused') reused++;
    return { total: this.prototypes.size, reused, fetched: this.prototypes.size - reused };
  }

  /** The first `limit` errors: the account's own first, then each prototype's in id order. */
  async firstErrors(limit: number): Promise<ManifestError[]> {
    const out = await this.errors(undefined);
    for (const id of this.prototypeIds()) {
      if (out.length >= limit) break;
      out.push(...(await this.errors(id)));
    }
    return out.slice(0, limit);
  }

  /**
   * The files of one prototype (or, for undefined, those outside any), in zip path order; with
   * `elementBodies: false`, all but the elements' own JSON. All at once: for the offline viewer,
   * which leaves the element bodies out (a prototype's pages, not its elements).
   */
  async files(prototypeId: string | undefined, which: FileSelection = {}): Promise<ArchivedEntry[]> {
    const out: ArchivedEntry[] = [];
    for await (const batch of this.sortedLines(prototypeId, which))
      for (const line of batch) out.push(JSON.parse(line.toString('utf8')) as ArchivedEntry);
    return out;
  }

  /**
   * The same files as `files`, in the same order, as their filed JSON lines in bytes, unparsed
   * and undecoded: the manifest copies them into its text, so a prototype of tens of thousands of
   * files is held neither as objects (each several times the size of its line) nor as strings
   * while it is written. Element bodies are filed apart (see addFile), so leaving them out reads
   * none of them. Up to `sortRunLines` lines are read and sorted at once; more are sorted in runs
   * filed back on disk and merged while they are handed out, so a prototype of 250,000 files
   * costs the memory of one run. Handed out in batches: a line at a time would cost a promise each.
   */
  async *sortedLines(prototypeId: string | undefined, which: FileSelection = {}): AsyncGenerator<Buffer[]> {
    const shelves = [prototypeId ?? TOP];
    if (prototypeId !== undefined && which.elementBodies !== false) shelves.push(elementShelf(prototypeId));
    const total = shelves.reduce((sum, shelf) => sum + this.store.count(shelf), 0);
    if (total <= this.sortRunLines) {
      const keyed: Keyed[] = [];
      for (const shelf of shelves) for (const line of await this.store.lineBytes(shelf)) keyed.push(keyedLine(line));
      yield keyed.sort(compareByIdKey).map((each) => each.line);
      return;
    }
    const read = this.sortedReads++;
    const runs: string[] = [];
    let run: Keyed[] = [];
    const fileRun = (): void => {
      const key = runKey(read, runs.length);
      this.store.appendLines(
        key,
        run.sort(compareByIdKey).map((each) => each.line),
      );
      runs.push(key);
      run = [];
    };
    for (const shelf of shelves) {
      for await (const line of this.store.lineStream(shelf)) {
        run.push(keyedLine(line));
        if (run.length >= this.sortRunLines) fileRun();
      }
    }
    if (run.length > 0) fileRun();
    yield* mergeRuns(runs.map((key) => this.store.lineStream(key, RUN_READ_BYTES)[Symbol.asyncIterator]()));
  }

  /**
   * Every file of a prototype, element bodies included, in the order they were filed rather than
   * in zip path order: for a reader that looks them up by name (the search index), which needs
   * neither the sort nor its runs on disk.
   */
  async *filedEntries(prototypeId: string): AsyncGenerator<ArchivedEntry> {
    for (const shelf of [prototypeId, elementShelf(prototypeId)])
      for await (const line of this.store.lineStream(shelf)) yield JSON.parse(line.toString('utf8')) as ArchivedEntry;
  }

  /** The errors of one prototype (or, for undefined, those of the account), by source. */
  async errors(prototypeId: string | undefined): Promise<ManifestError[]> {
    const key = errorKey(prototypeId ?? TOP);
    const count = prototypeId === undefined ? this.top.errors : (this.prototypes.get(prototypeId)?.errors ?? 0);
    if (count === 0) return [];
    const lines = await this.store.lines(key);
    return lines.map((line) => JSON.parse(line) as ManifestError).sort((a, b) => compareIds(a.source, b.source));
  }
}

type Keyed = { id: string; key: string | undefined; line: Buffer };

function keyedLine(line: Buffer): Keyed {
  const path = pathOfLine(line);
  return { id: path, key: idSortKey(path), line };
}

/**
 * Sorted runs merged into one sorted sequence, the smallest head each time, the heads kept in a
 * binary heap: a prototype of a million files makes over a hundred runs.
 */
async function* mergeRuns(runs: AsyncIterator<Buffer>[]): AsyncGenerator<Buffer[]> {
  const heap: { head: Keyed; run: AsyncIterator<Buffer> }[] = [];
  const less = (i: number, j: number): boolean =>
    compareByIdKey((heap[i] as { head: Keyed }).head, (heap[j] as { head: Keyed }).head) < 0;
  const swap = (i: number, j: number): void => {
    [heap[i], heap[j]] = [heap[j] as (typeof heap)[number], heap[i] as (typeof heap)[number]];
  };
  const down = (from: number): void => {
    for (let i = from; ;) {
      const left = 2 * i + 1;
      let smallest = i;
      if (left < heap.length && less(left, smallest)) smallest = left;
      if (left + 1 < heap.length && less(left + 1, smallest)) smallest = left + 1;
      if (smallest === i) return;
      swap(i, smallest);
      i = smallest;
    }
  };
  for (const run of runs) {
    const first = await run.next();
    if (first.done) continue;
    heap.push({ head: keyedLine(first.value), run });
    for (let i = heap.length - 1; i > 0 && less(i, (i - 1) >> 1); i = (i - 1) >> 1) swap(i, (i - 1) >> 1);
  }
  let batch: Buffer[] = [];
  while (heap.length > 0) {
    const top = heap[0] as (typeof heap)[number];
    batch.push(top.head.line);
    if (batch.length === MERGE_BATCH) {
      yield batch;
      batch = [];
    }
    const next = await top.run.next();
    if (next.done) {
      const last = heap.pop() as (typeof heap)[number];
      if (heap.length === 0) break;
      heap[0] = last;
    } else top.head = keyedLine(next.value);
    down(0);
  }
  if (batch.length > 0) yield batch;
}

const MERGE_BATCH = 1024;

/**
 * The path of a filed line, which starts with it (see entryLine) and needs no unescaping: entry
 * names are plain ASCII by construction (api/paths.ts).
 */
function pathOfLine(line: Buffer): string {
  return line.toString('latin1', PATH_AT, line.indexOf(QUOTE, PATH_AT));
}

const QUOTE = 0x22;

/** The prototype an API source belongs to: `/rabbit/api/prototypes/{id}.json` or `.../{id}/...`. */
function ownerOf(source: string): string | undefined {
  return parseSource(source)?.prototype;
}

/** A prototype is "reused" when everything but its metadata came from one earlier archive. */
function originOf(state: PrototypeTally): PrototypeOrigin {
  if (state.downloaded === 0 && state.reusedFrom.size > 0) {
    return { mode: 'reused', archive: [...state.reusedFrom].sort().join(', ') };
  }
  return state.origin;
}

/**
 * A file's filed line: the JSON of its manifest entry (its members as storage/file-entry.ts orders them,
 * `generatedFrom` only when set) and `offset` last when the body is in the pack. It starts with
 * the path (pathOfLine); prettyEntry drops the offset.
 */
export function entryLine(file: StoredFile): string {
  const parts = entryMembersText(file);
  if (file.offset !== undefined) parts.push(',"offset":', jsonNumber(file.offset));
  parts.push('}');
  return parts.join('');
}
