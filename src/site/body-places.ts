import { randomInt } from 'node:crypto';
import type { BodyRef } from '../storage/spool.js';

/**
 * Room for this many files at first, doubled as needed: most prototypes hold a few dozen files,
 * and room for 1,024 cost 80 KiB for each (an export of 1,800 small prototypes allocated 84 MiB
 * of tables it barely used, outside the heap, while it made the search index).
 */
const FIRST_ENTRIES = 32;
const NO_OFFSET = -1;
const EMPTY = -1;

/**
 * Where each of a prototype's bodies lies in the spool, by its name below the revision's folder:
 * a hash table in typed arrays over the names' UTF-8 bytes, about 80 bytes a file and none of it
 * objects the garbage collector walks. A prototype of 250,000 files was held at some 600 bytes a
 * file as the manifest entries the model hands out, and at some 140 as a Map of strings.
 */
export class BodyPlaces {
  private bytes = Buffer.allocUnsafe(FIRST_ENTRIES * 48);
  private used = 0;
  /** Per entry: where its name ends in `bytes` (it starts where the one before ends). */
  private ends = new Uint32Array(FIRST_ENTRIES);
  private offsets = new Float64Array(FIRST_ENTRIES);
  private sizes = new Float64Array(FIRST_ENTRIES);
  private fileIndex = new Uint32Array(FIRST_ENTRIES);
  /** Open addressing, twice as many slots as entries at most: an entry's number, or EMPTY. */
  private slots = new Int32Array(FIRST_ENTRIES * 2).fill(EMPTY);
  private readonly files: string[] = [];
  private readonly fileAt = new Map<string, number>();
  /** The names are the service's ids: a basis of its own per table, so none can be chosen to collide. */
  private readonly basis = randomInt(0x7fffffff);
  count = 0;

  /** Files a body under its name; a name filed again points at the later body. */
  set(name: string, ref: BodyRef): void {
    const key = Buffer.from(name, 'utf8');
    const slot = this.slotOf(key);
    let entry = this.slots[slot] as number;
    if (entry === EMPTY) {
      if (this.count === this.ends.length) {
        this.grow();
        this.set(name, ref);
        return;
      }
      entry = this.count++;
      this.slots[slot] = entry;
      this.append(key, entry);
    }
    let file = this.fileAt.get(ref.file);
    if (file === undefined) this.fileAt.set(ref.file, (file = this.files.push(ref.file) - 1));
    this.offsets[entry] = ref.offset ?? NO_OFFSET;
    this.sizes[entry] = ref.size;
    this.fileIndex[entry] = file;
  }

  has(name: string): boolean {
    return this.slots[this.slotOf(Buffer.from(name, 'utf8'))] !== EMPTY;
  }

  get(name: string): BodyRef | undefined {
    const entry = this.slots[this.slotOf(Buffer.from(name, 'utf8'))] as number;
    if (entry === EMPTY) return undefined;
    const file = this.files[this.fileIndex[entry] as number] as string;
    const offset = this.offsets[entry] as number;
    const size = this.sizes[entry] as number;
    return offset === NO_OFFSET ? { file, size } : { file, offset, size };
  }

  /** Every name, in the order filed. */
  *names(): Generator<string> {
    for (let entry = 0; entry < this.count; entry++)
      yield this.bytes.toString('utf8', this.startOf(entry), this.ends[entry] as number);
  }

  private startOf(entry: number): number {
    return entry === 0 ? 0 : (this.ends[entry - 1] as number);
  }

  /** The slot holding `key`, or the empty one where it would go. */
  private slotOf(key: Buffer): number {
    const mask = this.slots.length - 1;
    for (let slot = placeHash(key, this.basis) & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot] as number;
      if (entry === EMPTY) return slot;
      const start = this.startOf(entry);
      const end = this.ends[entry] as number;
      if (end - start === key.length && this.bytes.compare(key, 0, key.length, start, end) === 0) return slot;
    }
  }

  private append(key: Buffer, entry: number): void {
    if (this.used + key.length > this.bytes.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + key.length));
      this.bytes.copy(bigger, 0, 0, this.used);
      this.bytes = bigger;
    }
    key.copy(this.bytes, this.used);
    this.used += key.length;
    this.ends[entry] = this.used;
  }

  private grow(): void {
    const capacity = this.ends.length * 2;
    this.ends = widen(this.ends, new Uint32Array(capacity));
    this.offsets = widen(this.offsets, new Float64Array(capacity));
    this.sizes = widen(this.sizes, new Float64Array(capacity));
    this.fileIndex = widen(this.fileIndex, new Uint32Array(capacity));
    this.slots = new Int32Array(capacity * 2).fill(EMPTY);
    const mask = this.slots.length - 1;
    for (let entry = 0; entry < this.count; entry++) {
      let slot = placeHash(this.bytes.subarray(this.startOf(entry), this.ends[entry]), this.basis) & mask;
      while (this.slots[slot] !== EMPTY) slot = (slot + 1) & mask;
      this.slots[slot] = entry;
    }
  }
}

function widen<T extends Uint32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/**
 * FNV-1a from the table's own basis, then MurmurHash3's finaliser. FNV-1a alone is not enough
 * against chosen names: the low bits of its product depend only on the low bits of the basis and
 * bytes, so names that share a slot under one basis go on sharing slots under most others (ids
 * picked to pile up in one table piled up in any). The finaliser makes the slot depend on all 32
 * bits, where such names no longer meet.
 */
export function placeHash(bytes: Uint8Array, basis: number): number {
  let hash = basis;
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
