import { StringDecoder } from 'node:string_decoder';
import { jsonParser, type Token } from 'stream-json/parser.js';
import { standalone } from '../core/standalone-string.js';
import { isRabbitError } from '../core/errors.js';
import {
  checkError,
  checkFile,
  checkHead,
  checkIdentity,
  checkPrototype,
  IDENTITY_FIELDS,
  isObject,
  type Report,
} from './manifest-shape.js';
import type {
  FileEntry,
  ForeignReference,
  Manifest,
  ManifestError,
  PrototypeRecord,
  PrototypeRevision,
} from './types.js';

/** Everything of a manifest but its prototypes, top-level files, errors and foreign references. */
export type ManifestHead = Omit<Manifest, 'prototypes' | 'files' | 'errors' | 'foreignReferences'>;

/** Where a file entry is listed: under a prototype's revision, or (null) at the top level. */
export type FileOwner = { prototype: string; revision: string } | null;

export interface ManifestVisitor {
  /** Each file entry as it streams by, already shape-checked; a returned promise is awaited before reading on. */
  file?(entry: FileEntry, owner: FileOwner): void | Promise<void>;
  /**
   * Each prototype record once its closing brace has been read; its revisions' `files` are the
   * entries themselves only with `keepPrototypeFiles` (one prototype at a time), else empty.
   */
  prototype?(id: string, record: PrototypeRecord): void | Promise<void>;
  error?(error: ManifestError): void;
  foreignReference?(reference: ForeignReference): void;
}

export interface StreamManifestOptions {
  keepPrototypeFiles?: boolean;
}

/** The manifest is not JSON (`json`) or not shaped as one of ours (`shape`); `message` says where. */
export class ManifestReadError extends Error {
  constructor(
    readonly kind: 'json' | 'shape',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const NONE = Symbol.for('object-stream.none');
/** Stands for an entry's place in a shape check's message until the message is needed. */
const HERE = '\u0000here';

/**
 * Reads a manifest from a byte stream without ever holding it: stream-json turns it into tokens,
 * and only the small pieces are assembled (the head, one prototype record, one file entry, one
 * error). Each piece is checked as it completes, with the same messages as checkManifestShape;
 * the first fault stops the read. Resolves to the head once the closing brace has been read.
 */
export async function streamManifest(
  source: AsyncIterable<Buffer | string>,
  visitor: ManifestVisitor,
  options: StreamManifestOptions = {},
): Promise<ManifestHead> {
  const walker = new ManifestWalker(visitor, options.keepPrototypeFiles === true);
  const parse = jsonParser({ packValues: true, streamValues: false });
  const decoder = new StringDecoder('utf8');
  const feed = async (text: string | symbol): Promise<void> => {
    for (const token of tokensOf(parse, text)) {
      walker.token(token);
      // A prototype handler finishes before the next token, so handlers see the manifest's order.
      if (walker.waiting) await walker.settle();
    }
  };
  for await (const chunk of source) await feed(typeof chunk === 'string' ? chunk : decoder.write(chunk));
  const rest = decoder.end();
  if (rest !== '') await feed(rest);
  await feed(NONE);
  return walker.finish();
}

/**
 * Whether `source` opens as a manifest of the format this version reads: a JSON object whose
 * identifying fields (IDENTITY_FIELDS) all come within its first `maxBytes` and pass the checks
 * streamManifest makes of them. Nothing past that is read, and `source` is left there. False says
 * only that this much did not show a manifest: one written in another order, or damaged, or not
 * one at all, is told apart by streaming it whole.
 */
export async function opensAsManifest(source: AsyncIterable<Buffer>, maxBytes: number): Promise<boolean> {
  const walker = new ManifestWalker({}, false);
  const parse = jsonParser({ packValues: true, streamValues: false });
  const decoder = new StringDecoder('utf8');
  let bytes = 0;
  try {
    for await (const chunk of source) {
      const taken = chunk.subarray(0, maxBytes - bytes);
      bytes += taken.length;
      for (const token of tokensOf(parse, decoder.write(taken))) {
        walker.token(token);
        const identity = walker.identity();
        if (identity === undefined) continue;
        let fine = true;
        checkIdentity(identity, () => (fine = false));
        return fine;
      }
      if (bytes >= maxBytes) return false;
    }
  } catch (error) {
    // Bytes that are not JSON, not an object, or damaged in the zip: the whole read says which.
    if (error instanceof ManifestReadError || isRabbitError(error)) return false;
    throw error;
  }
  return false;
}

/** The parser's tokens for the next text (NONE: the end of it), or its fault as a ManifestReadError. */
function tokensOf(parse: (text: string) => unknown, text: string | symbol): Token[] {
  let out: unknown;
  try {
    out = parse(text as string);
  } catch (error) {
    throw new ManifestReadError('json', `not valid JSON (${(error as Error).message})`, { cause: error });
  }
  return typeof out === 'object' && out !== null && 'values' in out ? (out as { values: Token[] }).values : [];
}

type Place =
  | { kind: 'root' }
  | { kind: 'prototypes' }
  | { kind: 'record'; id: string; fields: Record<string, unknown>; revisions: Record<string, unknown> }
  | { kind: 'revisions'; record: RecordPlace }
  | { kind: 'revision'; record: RecordPlace; name: string; fields: Record<string, unknown>; files: FileEntry[] }
  | { kind: 'list'; name: 'files' | 'errors' | 'foreignReferences'; index: number; revision?: RevisionPlace };
type RecordPlace = Extract<Place, { kind: 'record' }>;
type RevisionPlace = Extract<Place, { kind: 'revision' }>;

/** Walks the token stream, keeping a stack of the streamed containers it is inside. */
class ManifestWalker {
  private readonly head: Record<string, unknown> = {};
  private readonly places: Place[] = [];
  private key = '';
  private started = false;
  private ended = false;
  /** A value being assembled whole, and where it goes once complete. */
  private building: { stack: unknown[]; key: string; done: (value: unknown) => void } | undefined;
  private pending: Array<Promise<void>> = [];

  constructor(
    private readonly visitor: ManifestVisitor,
    private readonly keepFiles: boolean,
  ) {}

  token(token: Token): void {
    if (this.building) return this.assemble(token);
    if (!this.started) {
      this.started = true;
      if (token.name !== 'startObject') throw shape('manifest.json is not a JSON object');
      this.places.push({ kind: 'root' });
      return;
    }
    switch (token.name) {
      case 'keyValue':
        this.key = fieldName(token.value);
        return;
      case 'endObject':
      case 'endArray':
        return this.close();
      case 'startObject':
      case 'startArray':
        if (this.descend(token.name === 'startObject')) return;
        this.building = { stack: [], key: '', done: this.placeValue() };
        return this.assemble(token);
      default:
        this.placeValue()(scalar(token));
    }
  }

  /** The head read so far, once it holds every one of the IDENTITY_FIELDS. */
  identity(): Record<string, unknown> | undefined {
    return IDENTITY_FIELDS.every((key) => Object.hasOwn(this.head, key)) ? this.head : undefined;
  }

  get waiting(): boolean {
    return this.pending.length > 0;
  }

  async settle(): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    await Promise.all(pending);
  }

  finish(): ManifestHead {
    if (!this.ended) throw new ManifestReadError('json', 'not valid JSON (it ends before its closing brace)');
    const issues: string[] = [];
    checkHead(this.head, (where, what) => issues.push(`${where} ${what}`));
    if (issues[0] !== undefined) throw shape(issues[0]);
    const { prototypes: _p, files: _f, errors: _e, foreignReferences: _r, ...head } = this.head;
    return head as unknown as ManifestHead;
  }

  /** Enters a container that is streamed rather than assembled; false when this one is assembled. */
  private descend(isObject: boolean): boolean {
    const place = this.places.at(-1);
    if (place === undefined) throw shape('manifest.json holds more than one JSON value');
    const key = this.key;
    let next: Place | undefined;
    if (place.kind === 'root' && key === 'prototypes' && isObject) next = { kind: 'prototypes' };
    else if (
      place.kind === 'root' &&
      (key === 'files' || key === 'errors' || key === 'foreignReferences') &&
      !isObject
    ) {
      next = { kind: 'list', name: key, index: 0 };
    } else if (place.kind === 'prototypes' && isObject) next = { kind: 'record', id: key, fields: {}, revisions: {} };
    else if (place.kind === 'record' && key === 'revisions' && isObject) next = { kind: 'revisions', record: place };
    else if (place.kind === 'revisions' && isObject)
      next = { kind: 'revision', record: place.record, name: key, fields: {}, files: [] };
    else if (place.kind === 'revision' && key === 'files' && !isObject)
      next = { kind: 'list', name: 'files', index: 0, revision: place };
    if (next === undefined) return false;
    // Mark the container as present and of the right type for the shape check at its end.
    if (place.kind === 'root') this.head[key] = isObject ? {} : [];
    else if (place.kind === 'record') place.fields[key] = {};
    else if (place.kind === 'revision') place.fields[key] = [];
    this.places.push(next);
    return true;
  }

  /** Where a complete value at the current position goes. */
  private placeValue(): (value: unknown) => void {
    const place = this.places.at(-1);
    const key = this.key;
    if (place === undefined) throw shape('manifest.json holds more than one JSON value');
    switch (place.kind) {
      // What is placed here is kept for the run (the head, a prototype's record and its revisions):
      // strings are copied out of the parser's text (see `kept`); a file entry's are not, being dropped.
      case 'root':
        return (value) => (this.head[key] = kept(value));
      case 'prototypes':
        return (value) => this.check((at) => checkPrototype(`prototypes.${key}`, key, value, at));
      case 'record':
        return (value) => (place.fields[key] = kept(value));
      case 'revisions':
        return (value) => (place.record.revisions[key] = kept(value));
      case 'revision':
        return (value) => (place.fields[key] = kept(value));
      case 'list': {
        const index = place.index++;
        return (value) => this.item(place, index, value);
      }
    }
  }

  private item(place: Extract<Place, { kind: 'list' }>, index: number, value: unknown): void {
    const revision = place.revision;
    if (place.name === 'files') {
      // Where the entry is gets spelled out only for a message: a million entries need no million strings.
      const where = () =>
        revision ? `prototypes.${revision.record.id}.revisions.${revision.name}.files[${index}]` : `files[${index}]`;
      const owner = revision ? { prototype: revision.record.id, revision: revision.name } : null;
      this.check((at) => checkFile(HERE, value, at, owner ?? undefined), where);
      const entry = value as FileEntry;
      if (revision && this.keepFiles) revision.files.push(entry);
      const done = this.visitor.file?.(entry, owner);
      if (done) this.pending.push(done);
    } else if (place.name === 'errors') {
      this.check((at) => checkError(`errors[${index}]`, value, at));
      this.visitor.error?.(value as ManifestError);
    } else {
      if (!isObject(value) || typeof value.url !== 'string')
        throw shape(`foreignReferences[${index}] must be { url, referencedBy }`);
      this.visitor.foreignReference?.(value as unknown as ForeignReference);
    }
  }

  private close(): void {
    const place = this.places.pop();
    if (place === undefined) throw shape('manifest.json is not a JSON object');
    if (place.kind === 'root') {
      this.ended = true;
    } else if (place.kind === 'revision') {
      const files = Array.isArray(place.fields.files) ? place.files : place.fields.files;
      place.record.revisions[place.name] = { ...place.fields, files } as PrototypeRevision;
    } else if (place.kind === 'record') {
      // A `revisions` object was streamed (its field holds a marker); anything else was assembled.
      const streamed = isObject(place.fields.revisions);
      const record = { ...place.fields, revisions: streamed ? place.revisions : place.fields.revisions };
      // The files were checked one by one as they streamed; the record is checked without them.
      const bare = { ...record, revisions: streamed ? withoutFiles(place.revisions) : record.revisions };
      this.check((at) => checkPrototype(`prototypes.${place.id}`, place.id, bare, at));
      const done = this.visitor.prototype?.(place.id, record as unknown as PrototypeRecord);
      if (done) this.pending.push(done);
    }
  }

  /** Runs a shape check; `here` names the place when the check was given the HERE placeholder. */
  private check(run: (at: Report) => void, here?: () => string): void {
    let first: string | undefined;
    run((where, what) => (first ??= `${where} ${what}`));
    if (first !== undefined) throw shape(here && first.startsWith(HERE) ? here() + first.slice(HERE.length) : first);
  }

  /** Builds one whole value from its tokens (generic JSON assembly, used only for small pieces). */
  private assemble(token: Token): void {
    const state = this.building as NonNullable<ManifestWalker['building']>;
    const put = (value: unknown): void => {
      const top = state.stack.at(-1);
      if (top === undefined) {
        this.building = undefined;
        state.done(value);
      } else if (Array.isArray(top)) top.push(value);
      else (top as Record<string, unknown>)[state.key] = value;
    };
    switch (token.name) {
      case 'startObject':
      case 'startArray': {
        const container = token.name === 'startObject' ? {} : [];
        if (state.stack.length > 0) put(container);
        state.stack.push(container);
        return;
      }
      case 'endObject':
      case 'endArray': {
        const container = state.stack.pop();
        if (state.stack.length === 0) put(container);
        return;
      }
      case 'keyValue':
        state.key = fieldName(token.value);
        return;
      default:
        put(kept(scalar(token)));
    }
  }
}

/**
 * A field's name, refused when it is `__proto__`: assigned to an object, that name does not make a
 * field but replaces the object's prototype, and a manifest wrapped in one would read as a manifest
 * with nothing in it (its fields inherited, none its own). No manifest the export writes has it:
 * its only names from the service are ids and revisions, letters and digits.
 */
function fieldName(name: string): string {
  if (name === '__proto__') throw shape('manifest.json has a field named __proto__, which no manifest has');
  return name;
}

function withoutFiles(revisions: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, revision] of Object.entries(revisions)) {
    out[name] = isObject(revision) && Array.isArray(revision.files) ? { ...revision, files: [] } : revision;
  }
  return out;
}

/**
 * A string placed in what is kept for the run (the head, a prototype's record) stands alone: the
 * parser's strings are slices of the 64 KiB of text they were parsed from, and one kept per
 * prototype kept that text alive (95 MiB of an export --since of 1,800 prototypes).
 */
function kept(value: unknown): unknown {
  return typeof value === 'string' ? standalone(value) : value;
}

function scalar(token: Token): unknown {
  switch (token.name) {
    case 'stringValue':
      return token.value;
    case 'numberValue':
      return Number(token.value);
    case 'nullValue':
      return null;
    case 'trueValue':
      return true;
    case 'falseValue':
      return false;
    default:
      throw new ManifestReadError('json', `not valid JSON (unexpected ${token.name})`);
  }
}

function shape(issue: string): ManifestReadError {
  return new ManifestReadError('shape', issue);
}
