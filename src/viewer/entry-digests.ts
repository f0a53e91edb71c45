import { createHash, timingSafeEqual } from 'node:crypto';
import type { FileOwner, ManifestVisitor } from '../manifest/manifest-stream.js';
import type { FileEntry } from '../manifest/types.js';
import type { ZipReader } from '../zip/zip-reader.js';

/**
 * What the manifest recorded of every entry it lists, by the entry's position in the zip: 32 bytes
 * of SHA-256 and a size each, in two flat arrays, so that an archive of a million entries costs a
 * fixed 40 MB rather than a map of strings. They are filed as the manifest streams by, once, when
 * `view` starts.
 */
export class EntryDigests {
  private constructor(
    private readonly digests: Buffer,
    private readonly sizes: Float64Array,
    private readonly listed: Uint8Array,
  ) {}

  /**
   * Digests to be filled by `visitor` as the manifest streams by (the caller streams it, once, for
   * whatever else it reads of it too); `digests` answers once the streaming is over. `filed` hears
   * each entry filed, with its position in the zip.
   */
  static filing(
    index: ZipReader['index'],
    filed: (entry: FileEntry, owner: FileOwner, position: number) => void = () => undefined,
  ): {
    visitor: Required<Pick<ManifestVisitor, 'file'>>;
    digests: EntryDigests;
  } {
    const digests = Buffer.alloc(index.count * 32);
    const sizes = new Float64Array(index.count);
    const listed = new Uint8Array(index.count);
    return {
      visitor: {
        file(entry, owner) {
          const hit = index.lookup(entry.path);
          // Listed twice, the first record stands, as everywhere else the manifest is read.
          if (hit === undefined || listed[hit.position] === 1) return;
          digests.write(entry.sha256, hit.position * 32, 32, 'hex');
          sizes[hit.position] = entry.size;
          listed[hit.position] = 1;
          // From this one lookup: a second one of each of a million entries would cost seconds at start.
          filed(entry, owner, hit.position);
        },
      },
      digests: new EntryDigests(digests, sizes, listed),
    };
  }

  /** Whether the manifest lists the entry at `position`. */
  lists(position: number): boolean {
    return this.listed[position] === 1;
  }

  /** The size the manifest records for the entry at `position`. */
  sizeOf(position: number): number {
    return this.sizes[position] ?? -1;
  }

  /** What the manifest recorded of the entry at `position`, as readVerified checks a body against it. */
  recorded(position: number): { size: number; sha256: string } {
    return { size: this.sizeOf(position), sha256: this.digests.toString('hex', position * 32, position * 32 + 32) };
  }

  /** A running check of an entry's bytes against what the manifest recorded of it. */
  checker(position: number): EntryCheck {
    const expected = this.digests.subarray(position * 32, position * 32 + 32);
    const size = this.sizeOf(position);
    const hash = createHash('sha256');
    let seen = 0;
    return {
      update(chunk) {
        hash.update(chunk);
        seen += chunk.length;
      },
      matches: () => seen === size && timingSafeEqual(hash.digest(), expected),
    };
  }
}

export interface EntryCheck {
  update(chunk: Buffer): void;
  /** Once every byte has gone through `update`: whether they are what the manifest recorded. */
  matches(): boolean;
}
