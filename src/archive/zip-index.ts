import { readAt, parseRecord, scanDirectory, type DirectoryEnd, type DirectoryRecord } from './zip-directory.js';

/** 32-bit FNV-1a of a name's UTF-8 bytes; replaceable so tests can force every name to collide. */
export type NameHash = (name: string) => number;

export const fnv1a: NameHash = (name) => {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(name, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193);
  return hash >>> 0;
};

/**
 * Where every entry of a zip is, in 16 bytes an entry (a million entries: 16 MB) instead of an
 * object and a string each: the offset of its central directory record, and the hash of its name
 * in a sorted array. A lookup binary-searches the hash and reads the record(s) again to compare
 * the real name, so a collision costs one more small read, never a wrong answer.
 *
 * Positions are central directory order (0-based); callers keep per-entry state in typed arrays or
 * bitsets indexed by position.
 */
export class ZipIndex {
  /** Central directory records, duplicates included. */
  readonly count: number;
  /** Names listed again after their first record, in directory order. */
  readonly duplicates: string[] = [];
  private readonly recordOffsets: Float64Array;
  private readonly hashes: Uint32Array;
  /** Positions sorted by (hash, position): the first of equal names comes first. */
  private readonly sorted: Uint32Array;
  /** Bit per position: set when an earlier record has the same name. */
  private readonly repeated: Uint8Array;

  constructor(
    private readonly fd: number,
    private readonly end: DirectoryEnd,
    private readonly hash: NameHash = fnv1a,
  ) {
    this.count = end.count;
    this.recordOffsets = new Float64Array(end.count);
    this.hashes = new Uint32Array(end.count);
    this.repeated = new Uint8Array((end.count + 7) >> 3);
    let position = 0;
    for (const record of scanDirectory(fd, end)) {
      this.recordOffsets[position] = record.recordOffset;
      this.hashes[position] = hash(record.name);
      position++;
    }
    const order = new Uint32Array(end.count);
    for (let i = 0; i < order.length; i++) order[i] = i;
    const hashes = this.hashes;
    order.sort((a, b) => (hashes[a] as number) - (hashes[b] as number) || a - b);
    this.sorted = order;
    this.markRepeats();
  }

  /** Distinct names. */
  get size(): number {
    return this.count - this.duplicates.length;
  }

  /** The position of the first record named `name`, or -1. */
  find(name: string): number {
    const wanted = this.hash(name);
    for (let i = this.lowerBound(wanted); i < this.sorted.length; i++) {
      const position = this.sorted[i] as number;
      if (this.hashes[position] !== wanted) break;
      if (this.record(position).name === name) return position;
    }
    return -1;
  }

  /** The central directory record at `position`, read again from the file. */
  record(position: number): DirectoryRecord {
    const offset = this.recordOffsets[position];
    if (offset === undefined) throw new RangeError(`no entry at position ${position}`);
    // Fixed part plus the longest name an entry of ours has; a longer record is read in full.
    let buffer = readAt(this.fd, offset, 46 + 512);
    let parsed = parseRecord(buffer, 0, offset);
    if (typeof parsed === 'number') {
      buffer = readAt(this.fd, offset, parsed);
      parsed = parseRecord(buffer, 0, offset);
      if (typeof parsed === 'number') throw new RangeError(`central directory record ${position} is cut short`);
    }
    return parsed;
  }

  /** True when an earlier record has the same name (only the first of a name is served). */
  isRepeat(position: number): boolean {
    return ((this.repeated[position >> 3] as number) & (1 << (position & 7))) !== 0;
  }

  /** Every record in directory order, read through a small window; nothing is kept. */
  *records(): Generator<{ position: number; record: DirectoryRecord }> {
    let position = 0;
    for (const record of scanDirectory(this.fd, this.end)) yield { position: position++, record };
  }

  private lowerBound(hash: number): number {
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.hashes[this.sorted[mid] as number] as number) < hash) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Equal names have equal hashes, so only runs of equal hashes need their names compared. */
  private markRepeats(): void {
    const repeats: number[] = [];
    for (let i = 0; i < this.sorted.length; ) {
      let j = i + 1;
      while (j < this.sorted.length && this.hashes[this.sorted[j] as number] === this.hashes[this.sorted[i] as number]) j++;
      if (j - i > 1) {
        const seen = new Set<string>();
        for (let k = i; k < j; k++) {
          const position = this.sorted[k] as number;
          const name = this.record(position).name;
          if (seen.has(name)) repeats.push(position);
          else seen.add(name);
        }
      }
      i = j;
    }
    repeats.sort((a, b) => a - b);
    for (const position of repeats) {
      this.repeated[position >> 3] = (this.repeated[position >> 3] as number) | (1 << (position & 7));
      this.duplicates.push(this.record(position).name);
    }
  }
}
