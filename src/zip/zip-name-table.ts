import { crc32 } from 'node:zlib';
import { CENTRAL_HEADER_BYTES } from './zip-records.js';

/**
 * Which entry names are already in the archive, in memory that stays small at a million entries:
 * an open-addressing table of 32-bit name hashes, each with where that entry's central directory
 * record starts. The names themselves stay in the (spilled) central directory; the writer compares
 * real names only when hashes match. A Set of a million strings would hold every name on the heap;
 * this costs 8 bytes a slot (in two typed arrays outside the heap), 12 once the central directory
 * passes 4 GiB.
 */
export class ZipNameTable {
  /** Hash of the name in each slot; 0 marks an empty slot (a real hash of 0 is stored as 1). */
  private hashes = new Uint32Array(INITIAL_SLOTS);
  private offsets: Uint32Array | Float64Array = new Uint32Array(INITIAL_SLOTS);
  private count = 0;

  static hash(name: Buffer): number {
    return crc32(name) || 1;
  }

  /**
   * Whether `name` is in the archive: compares it with the real names (read back through
   * `readRecord` from the central directory) of the entries whose hash matches, if any.
   */
  async contains(
    name: Buffer,
    hash: number,
    readRecord: (offset: number, length: number) => Promise<Buffer>,
  ): Promise<boolean> {
    for (const offset of this.candidates(hash)) {
      const record = await readRecord(offset, CENTRAL_HEADER_BYTES + name.length);
      const stored = record.length >= CENTRAL_HEADER_BYTES ? record.readUInt16LE(28) : -1;
      if (stored === name.length && record.subarray(CENTRAL_HEADER_BYTES).equals(name)) return true;
    }
    return false;
  }

  /** Central directory offsets of the names stored with this hash: candidates to compare. */
  candidates(hash: number): number[] {
    const mask = this.hashes.length - 1;
    let found: number[] | undefined;
    for (let slot = hash & mask; this.hashes[slot] !== 0; slot = (slot + 1) & mask) {
      if (this.hashes[slot] === hash) (found ??= []).push(this.offsets[slot] ?? 0);
    }
    return found ?? NONE;
  }

  add(hash: number, offset: number): void {
    if (offset > 0xffffffff && this.offsets instanceof Uint32Array) this.offsets = Float64Array.from(this.offsets);
    if ((this.count + 1) * 4 > this.hashes.length * 3) this.grow();
    this.place(hash, offset);
    this.count += 1;
  }

  private place(hash: number, offset: number): void {
    const mask = this.hashes.length - 1;
    let slot = hash & mask;
    while (this.hashes[slot] !== 0) slot = (slot + 1) & mask;
    this.hashes[slot] = hash;
    this.offsets[slot] = offset;
  }

  /** Doubles the table, keeping the load at most 3/4 so that linear probes stay short. */
  private grow(): void {
    const { hashes, offsets } = this;
    this.hashes = new Uint32Array(hashes.length * 2);
    this.offsets =
      offsets instanceof Uint32Array ? new Uint32Array(hashes.length * 2) : new Float64Array(hashes.length * 2);
    for (let slot = 0; slot < hashes.length; slot += 1) {
      const hash = hashes[slot] ?? 0;
      if (hash !== 0) this.place(hash, offsets[slot] ?? 0);
    }
  }
}

const INITIAL_SLOTS = 1024;
const NONE: number[] = [];
