import { createReadStream } from 'node:fs';
import { RabbitError } from '../core/errors.js';
import { streamChunks, type ChunkSource, type OnChunk } from '../core/read-chunks.js';
import type { SecretMarker } from '../core/secret-marker.js';
import type { CachedBody } from '../storage/body-cache.js';
import type { Spool } from '../storage/spool.js';
import { cachedBodyOf } from '../storage/stored-file.js';

/**
 * A body on its way into the spool with the run's keys replaced (core/secret-marker.ts), so the
 * spool's sha256 and size are those of the bytes the archive stores. A Content-Length is checked
 * here, against the bytes as served: what is stored may be longer or shorter.
 */
export class RedactedBody implements ChunkSource {
  /** Bytes as they came, before any key was replaced. */
  bytesIn = 0;
  private readonly replacer;

  constructor(
    private readonly body: ChunkSource,
    marker: SecretMarker,
    private readonly options: { source: string; expectedLength?: number; onChunk?: (bytes: number) => void },
  ) {
    this.replacer = marker.replacer();
  }

  /** How many keys were replaced. */
  get redactions(): number {
    return this.replacer.count;
  }

  async read(onChunk: OnChunk): Promise<void> {
    const { source, expectedLength } = this.options;
    await this.body.read((chunk) => {
      this.bytesIn += chunk.length;
      this.options.onChunk?.(chunk.length);
      const out = this.replacer.push(chunk);
      return out.length > 0 ? onChunk(out) : undefined;
    });
    if (expectedLength !== undefined && this.bytesIn !== expectedLength) {
      throw new RabbitError(
        'BODY_TRUNCATED',
        `body of ${source} ended after ${this.bytesIn} of ${expectedLength} bytes`,
        { source },
      );
    }
    const rest = this.replacer.end();
    if (rest.length > 0) await onChunk(rest);
  }
}

/**
 * A copy an earlier run left (the journal of a run before keys were replaced, or an archive given
 * to --since made by such a run) with the keys replaced like a fresh download's: the copy as it is
 * when it holds none, else a redacted copy put into the spool, counted in `keyRedactions`.
 */
export async function redactedCopy(
  spool: Spool,
  copy: CachedBody,
  marker: SecretMarker,
  source: string,
): Promise<CachedBody> {
  // A body of its own file is streamed (it may be a large PNG); a packed one is small.
  const bytes = (): ChunkSource =>
    copy.offset === undefined
      ? streamChunks(createReadStream(copy.file))
      : { read: async (onChunk) => onChunk(await spool.read(copy)) };
  // Looked for first, so that a copy without a key (nearly all) is not written a second time.
  const scan = marker.replacer();
  await bytes().read((chunk) => {
    scan.push(chunk);
    return undefined;
  });
  scan.end();
  // The values kept with it too: such a run kept the headers as the service sent them.
  const contentType = marker.redactText(copy.contentType);
  const lastModified = copy.lastModified === null ? null : marker.redactText(copy.lastModified);
  const served = { contentType, lastModified, ...(copy.keyRedactions ? { keyRedactions: copy.keyRedactions } : {}) };
  if (scan.count === 0)
    return contentType === copy.contentType && lastModified === copy.lastModified ? copy : cachedBodyOf(copy, served);
  const redacted = new RedactedBody(bytes(), marker, { source });
  const body = await spool.write(redacted, { maxBytes: Number.MAX_SAFE_INTEGER, source });
  const result = cachedBodyOf(body, served);
  result.keyRedactions = (copy.keyRedactions ?? 0) + redacted.redactions;
  return result;
}
