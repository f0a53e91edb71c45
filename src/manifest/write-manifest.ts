import type { ArchiveModel } from './archive-model.js';
import { compareIds } from '../api/ids.js';
import { FORMAT_VERSION, type Manifest, type ManifestError, type PrototypeRecord } from './types.js';

export interface ManifestMeta {
  toolVersion: string;
  baseUrl: string;
  startedAt: string;
  finishedAt: string;
  stats: NonNullable<Manifest['stats']>;
}

/**
 * manifest.json as UTF-8 bytes, one prototype at a time: the same document
 * `JSON.stringify(manifest, null, 2)` would give for the whole, but only one prototype's entries
 * are in memory at once. Everything goes through one output buffer of CHUNK_BYTES, handed on when
 * full: a buffer per prototype's list (and a string between each two) cost a fresh 64 KiB for
 * each of thousands of small prototypes, outside the heap and freed only when collected (tens of
 * megabytes at the peak of an export of 1,800 prototypes).
 * Prototypes in id order, each one's files in path order; errors by source.
 */
export async function* manifestText(model: ArchiveModel, meta: ManifestMeta): AsyncGenerator<string | Buffer> {
  const out = new ChunkedText();
  const head = {
    formatVersion: FORMAT_VERSION,
    tool: { name: 'rabbit-export', version: meta.toolVersion },
    source: { baseUrl: meta.baseUrl },
    startedAt: meta.startedAt,
    finishedAt: meta.finishedAt,
    complete: model.errorCount === 0,
  };
  yield* out.text(`{\n${members(head)},\n  "prototypes": {`);
  const ids = model.prototypeIds();
  for (const [index, id] of ids.entries()) {
    const state = model.prototype(id);
    if (!state) continue;
    const record: PrototypeRecord = {
      name: state.name,
      lastModification: state.lastModification,
      lastUser: state.lastUser,
      revision: state.revision,
      complete: state.complete,
      origin: state.origin,
      revisions: { [String(state.revision)]: { milestone: state.milestone, files: [] } },
    };
    // The record is small; its file list is written entry by entry into the place it leaves.
    // The milestone is the service's object and could hold a "files" key of its own: the list of
    // the revision is the last one.
    const text = indent(JSON.stringify(record, null, 2), 4);
    const at = text.lastIndexOf('"files": []');
    yield* out.text(`${index === 0 ? '' : ','}\n    ${JSON.stringify(id)}: ${text.slice(0, at)}"files": `);
    yield* array(out, model.sortedLines(id), 10);
    yield* out.text(text.slice(at + 11));
  }
  yield* out.text(`${ids.length === 0 ? '' : '\n  '}},\n  "files": `);
  yield* array(out, model.sortedLines(undefined), 2);
  yield* out.text(',\n  "errors": ');
  for await (const text of errorsText(model, ids)) yield* out.text(text);
  // URLs the pages named and sources as requested: texts the service wrote, so keys are taken out.
  const foreignReferences = model.foreignReferences.map((ref) => ({ ...ref, url: model.clean(ref.url) }));
  const notOffered = model.notOffered.map((each) => ({ ...each, examples: each.examples.map((e) => model.clean(e)) }));
  const tail: Partial<Manifest> = {
    ...(foreignReferences.length > 0 ? { foreignReferences } : {}),
    ...(notOffered.length > 0 ? { notOffered } : {}),
    stats: meta.stats,
  };
  yield* out.text(`,\n${members(tail)}\n}\n`);
  yield* out.end();
}

/**
 * One output buffer filled in place and handed on when the next write would not fit. A buffer
 * handed on is never written again (the deflate stream may still hold it): the next is fresh.
 */
class ChunkedText {
  private chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private at = 0;

  /** Makes room for `bytes` more, handing on what is filled if they would not fit. */
  private *room(bytes: number): Generator<Buffer> {
    if (this.at + bytes <= this.chunk.length) return;
    if (this.at > 0) yield this.chunk.subarray(0, this.at);
    this.chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes));
    this.at = 0;
  }

  *text(text: string): Generator<Buffer> {
    // UTF-8 takes at most three bytes for each UTF-16 code unit.
    yield* this.room(text.length * 3);
    this.at += this.chunk.write(text, this.at, 'utf8');
  }

  /** A filed entry line as an array member `pad` deep, after `[` or `,` and a new line. */
  *entry(line: Buffer, pad: number, first: boolean): Generator<Buffer> {
    yield* this.room(2 + pad + prettyRoom(line, pad));
    const { chunk } = this;
    let at = this.at;
    chunk[at++] = first ? BRACKET : COMMA;
    chunk[at++] = NEWLINE;
    for (let k = 0; k < pad; k++) chunk[at++] = SPACE;
    this.at = prettyEntry(line, pad, chunk, at);
  }

  *end(): Generator<Buffer> {
    if (this.at > 0) yield this.chunk.subarray(0, this.at);
    this.at = this.chunk.length;
  }
}

/** Errors of the account and of each prototype merged into one list ordered by source. */
async function* errorsText(model: ArchiveModel, ids: readonly string[]): AsyncGenerator<string> {
  const top = await model.errors(undefined);
  let first = true;
  const emit = (error: ManifestError): string => {
    const text = `${first ? '[' : ','}\n    ${indent(JSON.stringify(error, null, 2), 4)}`;
    first = false;
    return text;
  };
  let t = 0;
  for (const id of ids) {
    const group = await model.errors(id);
    if (group.length === 0) continue;
    const firstSource = (group[0] as ManifestError).source;
    while (t < top.length && compareIds((top[t] as ManifestError).source, firstSource) < 0)
      yield emit(top[t++] as ManifestError);
    for (const error of group) yield emit(error);
  }
  while (t < top.length) yield emit(top[t++] as ManifestError);
  yield first ? '[]' : '\n  ]';
}

/** The members of an object as they appear inside `JSON.stringify(outer, null, 2)`. */
function members(value: object): string {
  return indent(JSON.stringify(value, null, 2), 0).slice(2, -2);
}

/**
 * File entries (their filed JSON lines, in order) as a pretty-printed array at the given depth of
 * indentation, written straight into the output buffer: a prototype's list can run to tens of
 * thousands of entries, megabytes of text that would otherwise be strings (garbage) first.
 * Respacing the bytes costs well under what pretty-printing strings and encoding them did
 * (docs/design.md, "manifest.json's file lists are copied").
 */
async function* array(
  out: ChunkedText,
  batches: AsyncIterable<readonly Buffer[]>,
  depth: number,
): AsyncGenerator<Buffer> {
  const pad = depth + 2;
  let index = 0;
  for await (const lines of batches) {
    for (const line of lines) {
      yield* out.entry(line, pad, index++ === 0);
    }
  }
  yield* out.text(index === 0 ? '[]' : `\n${' '.repeat(depth)}]`);
}

const CHUNK_BYTES = 64 * 1024;

/**
 * Room enough for prettyEntry to write a line, without scanning it: every byte copied once, and
 * at most a newline and an indentation for each (the real figure is a dozen members' worth).
 */
function prettyRoom(line: Buffer, depth: number): number {
  return line.length * (depth + 4) + depth + 2;
}

/**
 * Writes a filed entry line (see entryLine in archive-model.ts: the compact JSON of a manifest
 * entry, a flat object of strings, numbers and nulls, with `offset` appended last) into `out` at
 * `at` as `JSON.stringify(entry, null, 2)` indented to `depth` writes it, and returns where it
 * ends; `out` must have prettyRoom(line, depth) bytes free from `at`. Compact and pretty JSON
 * differ only in the spacing between members, so the bytes of each value are copied as they are
 * (UTF-8 needs no care: every byte of a multi-byte character is above 0x7f), and `offset`, which
 * is not part of the manifest, is left out. No line is parsed or decoded into a string.
 */
export function prettyEntry(line: Buffer, depth: number, out: Buffer, at: number): number {
  const end = valuesEnd(line);
  let n = at;
  if (end <= 1) {
    out[n++] = OPEN;
    out[n++] = CLOSE;
    return n;
  }
  const inner = depth + 2;
  let inString = false;
  for (let i = 0; i < end; i++) {
    const c = line[i] as number;
    out[n++] = c;
    if (inString) {
      // An escaped character is copied with its backslash, whatever it is.
      if (c === BACKSLASH) out[n++] = line[++i] as number;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN || c === COMMA) {
      out[n++] = NEWLINE;
      for (let k = 0; k < inner; k++) out[n++] = SPACE;
    } else if (c === COLON) {
      out[n++] = SPACE;
    }
  }
  out[n++] = NEWLINE;
  for (let k = 0; k < depth; k++) out[n++] = SPACE;
  out[n++] = CLOSE;
  return n;
}

/** Where the members to copy end: at `,"offset":` when the line ends with that member, else at the closing brace. */
function valuesEnd(line: Buffer): number {
  const close = line.length - 1;
  let i = close - 1;
  while (i >= 0 && (line[i] as number) >= DIGIT_0 && (line[i] as number) <= DIGIT_9) i--;
  const member = i + 1 - OFFSET_MEMBER.length;
  if (i < close - 1 && member >= 0 && line.compare(OFFSET_MEMBER, 0, OFFSET_MEMBER.length, member, i + 1) === 0)
    return member;
  return close;
}

const OFFSET_MEMBER = Buffer.from(',"offset":');
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c;
const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const BRACKET = 0x5b; // [
const COMMA = 0x2c;
const COLON = 0x3a;
const SPACE = 0x20;
const NEWLINE = 0x0a;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

function indent(text: string, depth: number): string {
  return depth === 0 ? text : text.replaceAll('\n', `\n${' '.repeat(depth)}`);
}
