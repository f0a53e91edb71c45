import { deriveKey } from './prng.js';

/**
 * The keys of the sample account. Read-write and read-only keys see every prototype; each
 * per-prototype key is read-only and sees its one prototype, like the "link to this prototype"
 * keys the live service issued (api-notes.md).
 */
export interface ServiceKeys {
  readWrite: string;
  readOnly: string;
  perPrototype: Record<string, string>;
  /** Well-formed (40 hex characters) yet unknown to the service. */
  invalid: string;
}

export interface Access {
  write: boolean;
  /** The only prototype this key may read; undefined for account-wide keys. */
  prototype?: string;
}

/** A key the service stops honouring after a number of requests that carry it, as a revocation mid-run does. */
export interface Revocation {
  key: string;
  /** Requests carrying the key that are still answered; every later one is refused (401). */
  afterRequests: number;
}

export class KeyRing {
  readonly keys: ServiceKeys;
  private readonly byKey = new Map<string, Access>();
  private revocation: (Revocation & { used: number; refused: number }) | undefined;

  constructor(
    private readonly seed: number,
    prototypeIds: readonly string[],
  ) {
    this.keys = {
      readWrite: deriveKey(seed, 'read-write'),
      readOnly: deriveKey(seed, 'read-only'),
      perPrototype: {},
      invalid: deriveKey(seed, 'invalid'),
    };
    this.byKey.set(this.keys.readWrite, { write: true });
    this.byKey.set(this.keys.readOnly, { write: false });
    for (const id of prototypeIds) this.addPrototype(id);
  }

  /** A deleted prototype keeps its key: the holder still has it, it just finds nothing. */
  addPrototype(id: string): void {
    const key = deriveKey(this.seed, `prototype/${id}`);
    this.keys.perPrototype[id] = key;
    this.byKey.set(key, { write: false, prototype: id });
  }

  /** Revokes `key` once it has been used `afterRequests` times; undefined gives every key back. */
  revoke(revocation: Revocation | undefined): void {
    this.revocation = revocation ? { ...revocation, used: 0, refused: 0 } : undefined;
  }

  /** Requests that carried the revoked key after it was revoked: what a client spent on a dead key. */
  get refusedAfterRevocation(): number {
    return this.revocation?.refused ?? 0;
  }

  lookup(key: string | null): Access | undefined {
    if (key === null) return undefined;
    const revoked = this.revocation;
    if (revoked && key === revoked.key && ++revoked.used > revoked.afterRequests) {
      revoked.refused++;
      return undefined;
    }
    return this.byKey.get(key);
  }
}

export function mayRead(access: Access, prototypeId: string): boolean {
  return access.prototype === undefined || access.prototype === prototypeId;
}
