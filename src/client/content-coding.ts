import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import type { Transform } from 'node:stream';
import type { ChunkSource, OnChunk } from '../core/read-chunks.js';
import { RabbitError, isRabbitError } from '../core/errors.js';

/**
 * Content-Encoding, as browsers and `curl --compressed` handle it: we ask for gzip, deflate and br
 * on every GET, and decode whatever coding an answer declares, asked for or not (a proxy in front
 * of the service may compress on its own). What is archived, sized and hashed is the decoded body:
 * the resource as the service meant it.
 *
 * undici 7 has a decompress interceptor, but it is not used: it inflates `deflate` only in its
 * zlib-wrapped form (servers also send raw deflate), passes an unknown coding through as if it
 * were the body, caps decoded bytes per dispatcher rather than per request (--max-size differs by
 * kind of body), drops Content-Length (so a body cut short on the wire could not be told from a
 * whole one) and hides the bytes on the wire, which the transfer watchdog and the summary need.
 */

/** What we accept, in the order we prefer it. */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

export type Coding = 'gzip' | 'deflate' | 'br';

/** More codings than this on one answer is an attack, not a configuration (curl's limit too). */
export const MAX_CODINGS = 5;

const CODING_NAMES: Readonly<Record<string, Coding | 'identity'>> = {
  gzip: 'gzip',
  'x-gzip': 'gzip',
  deflate: 'deflate',
  br: 'br',
  identity: 'identity',
};

/**
 * The codings a Content-Encoding header declares, in the order they were applied (`gzip, br`:
 * gzip first, so br is undone first); `identity` and empty members left out. Names are matched
 * without regard to case or surrounding spaces. An unknown coding, or too many, is UNKNOWN_CODING:
 * the body cannot be read as the resource, and asking again will not change that.
 */
export function parseContentEncoding(header: string | undefined, source: string): Coding[] {
  if (header === undefined) return [];
  const codings: Coding[] = [];
  for (const member of header.split(',')) {
    const name = member.trim().toLowerCase();
    if (name === '') continue;
    const coding = CODING_NAMES[name];
    if (coding === undefined) {
      throw new RabbitError('UNKNOWN_CODING', `GET ${source}: unknown Content-Encoding "${printable(name)}"`, {
        source,
        method: 'GET',
      });
    }
    if (coding !== 'identity') codings.push(coding);
  }
  if (codings.length > MAX_CODINGS) {
    throw new RabbitError(
      'UNKNOWN_CODING',
      `GET ${source}: ${codings.length} stacked Content-Encodings (at most ${MAX_CODINGS} are decoded)`,
      { source, method: 'GET' },
    );
  }
  return codings;
}

/**
 * The most bytes an encoded body may take on the wire when its decoded form is within `maxBytes`.
 * Compressing incompressible bytes adds a few bytes per 64 KiB block (deflate, brotli) and a
 * header; a body far beyond that is not a compressed resource within the cap, while a stream of
 * empty blocks could otherwise run for ever without yielding a decoded byte.
 */
export function wireCap(maxBytes: number): number {
  return maxBytes + Math.ceil(maxBytes / 64) + 64 * 1024;
}

/**
 * zlib-wrapped deflate (RFC 1950) starts with a header whose method nibble is 8 and whose first
 * two bytes, read as a big-endian number, are a multiple of 31; raw deflate (RFC 1951, what some
 * servers send as `deflate`) never passes both tests with a valid first block.
 */
export function isZlibWrapped(head: Buffer): boolean {
  if (head.length < 2) return false;
  const cmf = head[0] as number;
  const flg = head[1] as number;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

export interface DecodeOptions {
  codings: readonly Coding[];
  /** --max-size of this kind of body, applied to the decoded bytes as they come. */
  maxBytes: number;
  source: string;
  /** Bytes that arrived on the wire (the transfer watchdog watches these). */
  onWire?: (bytes: number) => void;
  /** Content-Length of the answer: the length on the wire. */
  expectedWireLength?: number;
  /** Stops the transfer (the response body's destroy). */
  abort: (error: unknown) => void;
}

/** Takes bytes and passes on what they decode to; a returned promise means "wait before the next". */
interface Sink {
  write(chunk: Buffer): Promise<void> | undefined;
  end(): Promise<void>;
  destroy(): void;
}

/**
 * An encoded response body as the decoded bytes it stands for, read once. Wire chunks go through
 * Node's zlib streams, one per coding; a reader that must wait (a file write) pauses the inflater,
 * whose full buffers then pause the transfer, so memory stays flat however far a body inflates.
 * The decoded cap is checked before each chunk is handed on: a bomb is stopped at the cap, its
 * inflater destroyed and its transfer aborted.
 */
export class DecodedBody implements ChunkSource {
  /** Bytes read from the wire so far. */
  wireBytes = 0;
  /** Decoded bytes handed on so far. */
  decodedBytes = 0;

  constructor(
    private readonly wire: ChunkSource,
    private readonly options: DecodeOptions,
  ) {}

  read(onChunk: OnChunk): Promise<void> {
    const { options } = this;
    return new Promise<void>((resolve, reject) => {
      let failure: { error: unknown } | undefined;
      let breakOff: (error: unknown) => void = () => undefined;
      const broken = new Promise<never>((_, rejectBroken) => (breakOff = rejectBroken));
      broken.catch(() => undefined);
      const stages: Sink[] = [];
      const fail = (error: unknown): void => {
        if (failure) return;
        failure = { error };
        for (const stage of stages) stage.destroy();
        breakOff(error);
        options.abort(error);
        reject(error);
      };
      const deliver: Sink = {
        write: (chunk) => {
          this.decodedBytes += chunk.length;
          if (this.decodedBytes > options.maxBytes) throw decodedTooLarge(options, this.wireBytes);
          return onChunk(chunk);
        },
        end: () => Promise.resolve(),
        destroy: () => undefined,
      };
      // Decoded last to first: the last coding applied is undone first.
      let next = deliver;
      for (const coding of options.codings) {
        next = new ZlibSink(coding, next, options.source, fail, broken);
        stages.push(next);
      }
      const first = next;
      const limit = wireCap(options.maxBytes);
      this.wire
        .read((chunk) => {
          if (failure) throw failure.error;
          this.wireBytes += chunk.length;
          options.onWire?.(chunk.length);
          if (this.wireBytes > limit) throw encodedTooLarge(options, limit);
          return first.write(chunk);
        })
        .then(async () => {
          const expected = options.expectedWireLength;
          if (expected !== undefined && this.wireBytes !== expected) {
            throw new RabbitError(
              'BODY_TRUNCATED',
              `body of ${options.source} ended after ${this.wireBytes} of ${expected} bytes on the wire`,
              { source: options.source },
            );
          }
          // An empty body declared as encoded (some servers do this for an empty resource) is empty,
          // as browsers and curl take it.
          if (this.wireBytes === 0) {
            for (const stage of stages) stage.destroy();
            return;
          }
          await first.end();
        })
        .then(() => {
          if (!failure) resolve();
        }, fail);
    });
  }
}

/** One coding undone by a zlib stream, its output handed to the next sink with back-pressure. */
class ZlibSink implements Sink {
  private stream: Transform | undefined;
  /** Bytes held until the first two tell raw deflate from zlib-wrapped. */
  private head: Buffer | undefined;
  private pending: Promise<void> | undefined;
  private ended: Promise<void> | undefined;

  constructor(
    private readonly coding: Coding,
    private readonly next: Sink,
    private readonly source: string,
    private readonly fail: (error: unknown) => void,
    private readonly broken: Promise<never>,
  ) {
    if (coding !== 'deflate') this.start(coding === 'gzip' ? createGunzip() : createBrotliDecompress());
  }

  write(chunk: Buffer): Promise<void> | undefined {
    if (!this.stream) {
      this.head = this.head ? Buffer.concat([this.head, chunk]) : chunk;
      if (this.head.length < 2) return undefined;
      chunk = this.head;
      this.head = undefined;
      this.start(isZlibWrapped(chunk) ? createInflate() : createInflateRaw());
    }
    const stream = this.stream as Transform;
    if (stream.write(chunk)) return undefined;
    return Promise.race([new Promise<void>((resolve) => stream.once('drain', () => resolve())), this.broken]);
  }

  end(): Promise<void> {
    if (!this.stream) this.start(isZlibWrapped(this.head ?? Buffer.alloc(0)) ? createInflate() : createInflateRaw());
    const stream = this.stream as Transform;
    if (this.head) stream.write(this.head);
    this.head = undefined;
    stream.end();
    return Promise.race([this.ended as Promise<void>, this.broken]).then(async () => {
      await this.pending;
      await this.next.end();
    });
  }

  destroy(): void {
    this.stream?.destroy();
  }

  private start(stream: Transform): void {
    this.stream = stream;
    stream.on('error', (error) => this.fail(undecodable(this.coding, this.source, error)));
    stream.on('data', (out: Buffer) => {
      let waiting: Promise<void> | undefined;
      try {
        waiting = this.next.write(out);
      } catch (error) {
        this.fail(error);
        return;
      }
      if (!waiting) return;
      stream.pause();
      this.pending = waiting.then(
        () => {
          this.pending = undefined;
          stream.resume();
        },
        (error: unknown) => this.fail(error),
      );
    });
    this.ended = new Promise<void>((resolve) => stream.once('end', resolve));
  }
}

function undecodable(coding: Coding, source: string, error: unknown): RabbitError {
  if (isRabbitError(error)) return error;
  const reason = (error as Error | null)?.message ?? String(error);
  return new RabbitError('BODY_UNDECODABLE', `GET ${source}: the ${coding} body does not decode (${reason})`, {
    source,
    method: 'GET',
    cause: error,
  });
}

function decodedTooLarge(options: DecodeOptions, wireBytes: number): RabbitError {
  return new RabbitError(
    'BODY_TOO_LARGE',
    `GET ${options.source}: decoded body exceeds the cap of ${options.maxBytes} bytes (--max-size) ` +
      `after ${wireBytes} bytes of ${options.codings.join(', ')} on the wire`,
    { source: options.source, method: 'GET' },
  );
}

function encodedTooLarge(options: DecodeOptions, limit: number): RabbitError {
  return new RabbitError(
    'BODY_TOO_LARGE',
    `GET ${options.source}: encoded body exceeds ${limit} bytes on the wire, more than any ` +
      `${options.codings.join(', ')} body within the cap of ${options.maxBytes} bytes (--max-size) can take`,
    { source: options.source, method: 'GET' },
  );
}

/** A header value in a message: control characters and overlong text cut. */
function printable(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 40 ? `${clean.slice(0, 40)}...` : clean;
}
