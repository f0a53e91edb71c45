import { createHash } from 'node:crypto';

/**
 * Seeded randomness for the fake service. Every generator is derived from the service seed plus a
 * label, so adding a prototype or a fault never shifts the numbers another part of the data sees.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** The generator's whole state: `rngAt(rng.state())` continues exactly where this one is. */
  state(): number;
}

export function createRng(seed: number, ...labels: Array<string | number>): Rng {
  return rngAt(hash32(`${seed}:${labels.join(':')}`));
}

/** A generator resumed from a saved state, so big datasets can be generated one piece at a time. */
export function rngAt(initial: number): Rng {
  let state = initial | 0;
  // mulberry32: tiny, fast and good enough for test data; not for anything secret.
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new RangeError('pick from an empty list');
      return item;
    },
    state: () => state,
  };
}

/** FNV-1a: spreads similar labels ("p1", "p2") over unrelated seeds. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A 40-character key, the length of the keys seen in the wild (api-notes.md). */
export function deriveKey(seed: number, label: string): string {
  return createHash('sha1').update(`rabbit-fake-service:${seed}:${label}`).digest('hex');
}

/** 16 bytes of key material for the noise stream of one resource. */
export function deriveBytes(seed: number, label: string): Buffer {
  return createHash('sha256').update(`rabbit-fake-noise:${seed}:${label}`).digest().subarray(0, 16);
}
