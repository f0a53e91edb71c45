import { readAtSync as readAt } from '../core/positional-io.js';
import { parseRecord, scanDirectory, type DirectoryEnd, type DirectoryRecord } from './zip-directory.js';

/** 32-bit FNV-1a of a name's UTF-8 bytes; replaceable so tests can force every name to collide. */
export type NameHash = (name: string) => number;

export const fnv1a: NameHash = (name) => {
  let hash = 0x811c9dc5;
  const bytes = Buffer.from(name, 'utf8');
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
  return hash >>> 0;
};

const RECORD_READ = 46 + 512;

/**
 * Where every entry of a zip is, in 16 bytes an entry (a million entries: 16 MB) instead of an
 * object and a string each: the offset of its central directory record, where its data must end
 * (see dataLimits), and a sorted array of keys that pack the hash of its name with its position. A
 * lookup binary-searches the hash and reads the record(s) again to compare the real name, so a
 * collision costs one more small read, never a wrong answer.
 *
 * Positions are central directory order (0-based); callers keep per-entry state in typed arrays or
 * bitsets indexed by position.
 */
export class ZipIndex {
  /** Central directory records, duplicates included. */
  readonly count: number;
  /** Names listed again after their first record, in directory order. */
  readonly duplicates: string[] = [];
  /** Four bytes an entry while the central directory ends below 4 GiB (some 40 million entries), else eight. */
  private readonly recordOffsets: Uint32Array | Float64Array;
  /** Per position: where the entry's data must end (dataLimits). */
  private readonly limits: Uint32Array | Float64Array;
  /**
   * hash * 2^positionBits + position, sorted: one native numeric sort (no comparator, no boxing)
   * orders by hash and, among equal hashes, by position, so the first of equal names comes first.
   * Keys stay below 2^53; past 2^21 entries the hash loses low bits, which only adds collisions.
   */
  private readonly keys: Float64Array;
  private readonly positionScale: number;
  /** Lookups are synchronous, so one buffer serves them all. */
  private readonly scratch = Buffer.allocUnsafe(RECORD_READ);
  private readonly hashShift: number;

  constructor(
    private readonly fd: number,
    private readonly end: DirectoryEnd,
    private readonly hash: NameHash = fnv1a,
  ) {
    this.count = end.count;
    const positionBits = Math.max(1, Math.ceil(Math.log2(end.count + 1)));
    this.positionScale = 2 ** positionBits;
    this.hashShift = Math.max(0, 32 - (53 - positionBits));
    const small = end.offset + end.size <= 0xffffffff;
    this.recordOffsets = small ? new Uint32Array(end.count) : new Float64Array(end.count);
    this.limits = small ? new Uint32Array(end.count) : new Float64Array(end.count);
    this.keys = new Float64Array(end.count);
    let position = 0;
    for (const record of scanDirectory(fd, end)) {
      this.recordOffsets[position] = record.recordOffset;
      // An offset at or past the directory is no entry's: clamped there, its data has no room.
      this.limits[position] = Math.min(record.localHeaderOffset, end.offset);
      this.keys[position] = this.hashOf(record.name) * this.positionScale + position;
      position++;
    }
    this.keys.sort();
    this.markRepeats();
    dataLimits(this.limits, end.offset);
  }

  /** Distinct names. */
  get size(): number {
    return this.count - this.duplicates.length;
  }

  /** The position of the first record named `name`, or -1. */
  find(name: string): number {
    return this.lookup(name)?.position ?? -1;
  }

  /** The first record named `name` and its position, or undefined. */
  lookup(name: string): { position: number; record: DirectoryRecord } | undefined {
    const wanted = this.hashOf(name);
    for (let i = this.lowerBound(wanted * this.positionScale); i < this.keys.length; i++) {
      const key = this.keys[i] as number;
      if (Math.floor(key / this.positionScale) !== wanted) break;
      const position = key % this.positionScale;
      const record = this.record(position);
      if (record.name === name) return { position, record };
    }
    return undefined;
  }

  /** The central directory record at `position`, read again from the file. */
  record(position: number): DirectoryRecord {
    const offset = this.recordOffsets[position];
    if (offset === undefined) throw new RangeError(`no entry at position ${position}`);
    // Fixed part plus the longest name an entry of ours has; a longer record is read in full.
    let buffer = readAt(this.fd, offset, RECORD_READ, this.scratch);
    let parsed = parseRecord(buffer, 0, offset);
    if (typeof parsed === 'number') {
      buffer = readAt(this.fd, offset, parsed);
      parsed = parseRecord(buffer, 0, offset);
      if (typeof parsed === 'number') throw new RangeError(`central directory record ${position} is cut short`);
    }
    parsed.dataLimit = this.limits[position] as number;
    return parsed;
  }

  /** True when an earlier record has the same name (only the first of a name is served). */
  isRepeat(position: number): boolean {
    return this.repeated?.has(position) ?? false;
  }

  /** Every record in directory order, read through a small window; nothing is kept. */
  *records(): Generator<{ position: number; record: DirectoryRecord }> {
    let position = 0;
    for (const record of scanDirectory(this.fd, this.end)) {
      record.dataLimit = this.limits[position] as number;
      yield { position: position++, record };
    }
  }

  private hashOf(name: string): number {
    return this.hash(name) >>> this.hashShift;
  }

  private lowerBound(key: number): number {
    let low = 0;
    let high = this.keys.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.keys[mid] as number) < key) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Positions whose name an earlier record already has; a zip we wrote has none, so a set will do. */
  private repeated: Set<number> | undefined;

  /** Equal names have equal hashes, so only runs of equal hashes need their names compared. */
  private markRepeats(): void {
    const repeats: number[] = [];
    const keys = this.keys;
    const scale = this.positionScale;
    for (let i = 0; i < keys.length;) {
      const hash = Math.floor((keys[i] as number) / scale);
      let j = i + 1;
      while (j < keys.length && Math.floor((keys[j] as number) / scale) === hash) j++;
      if (j - i > 1) {
        const seen = new Set<string>();
        for (let k = i; k < j; k++) {
          const position = (keys[k] as number) % scale;
          const name = this.record(position).name;
          if (seen.has(name)) repeats.push(position);
          else seen.add(name);
        }
      }
      i = j;
    }
    if (repeats.length === 0) return;
    repeats.sort((a, b) => a - b);
    this.repeated = new Set(repeats);
    for (const position of repeats) this.duplicates.push(this.record(position).name);
  }
}

/**
 * Turns each entry's local header offset into where its data must end: the next greater offset of
 * any entry, or the central directory. Records that share a local header (the same compressed
 * bytes listed again under other names, so that a small zip inflates to many times its size) keep
 * it for the first of them only: the others get their own offset, so none of their data fits.
 * A zip lists its entries in file order, which costs one pass; any other order, a sort.
 */
function dataLimits(offsets: Uint32Array | Float64Array, directory: number): void {
  const count = offsets.length;
  let ordered = true;
  for (let i = 1; i < count && ordered; i++) ordered = (offsets[i] as number) > (offsets[i - 1] as number);
  if (ordered) {
    for (let i = 0; i < count; i++) offsets[i] = i + 1 < count ? (offsets[i + 1] as number) : directory;
    return;
  }
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  order.sort((a, b) => (offsets[a] as number) - (offsets[b] as number) || a - b);
  // Walked from the end: `next` is the smallest offset greater than the current one.
  let next = directory;
  for (let k = count - 1; k >= 0;) {
    const start = offsets[order[k] as number] as number;
    let first = k;
    while (first > 0 && offsets[order[first - 1] as number] === start) first--;
    for (let j = first + 1; j <= k; j++) offsets[order[j] as number] = start;
    offsets[order[first] as number] = next;
    next = start;
    k = first - 1;
  }
}
