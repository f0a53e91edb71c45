import type { Representation } from './payload.js';

/**
 * Bounded caches for the fake service: a big generated account is produced piece by piece, and
 * neither the pieces nor their renderings may accumulate. A Map keeps insertion order, so moving
 * an entry to the end on every hit makes the first one the least recently used.
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.capacity) break;
      this.entries.delete(oldest);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every key the predicate picks; writes are rare, so a scan is fine. */
  deleteWhere(pick: (key: K) => boolean): void {
    for (const key of [...this.entries.keys()]) if (pick(key)) this.entries.delete(key);
  }
}

interface RenderedEntry {
  scope: string;
  representation: Representation;
  bytes: number;
}

// What a Map entry, its key, a Representation, its payload closure and a Buffer cost beyond the
// body itself, roughly: more than a small JSON body's own bytes, so it cannot be left out.
const ENTRY_OVERHEAD = 1024;

/**
 * Rendered bodies by scope (a prototype, or '' for the list) and route, limited by the bytes they
 * hold; streamed bodies (padded PNGs) hold almost nothing. A change drops its scope.
 */
export class RenderedCache {
  private readonly entries = new Map<string, RenderedEntry>();
  private bytes = 0;

  constructor(private readonly budgetBytes: number) {}

  get(scope: string, key: string, build: () => Representation): Representation {
    const id = `${scope}\u0000${key}`;
    const hit = this.entries.get(id);
    if (hit !== undefined) {
      this.entries.delete(id);
      this.entries.set(id, hit);
      return hit.representation;
    }
    const representation = build();
    const bytes = (representation.payload.bytes?.length ?? 0) + ENTRY_OVERHEAD;
    this.entries.set(id, { scope, representation, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.budgetBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
    return representation;
  }

  dropScope(scope: string): void {
    for (const [id, entry] of this.entries) {
      if (entry.scope !== scope) continue;
      this.entries.delete(id);
      this.bytes -= entry.bytes;
    }
  }
}
