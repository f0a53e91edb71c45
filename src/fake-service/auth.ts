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

export class KeyRing {
  readonly keys: ServiceKeys;
  private readonly byKey = new Map<string, Access>();

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

  lookup(key: string | null): Access | undefined {
    return key === null ? undefined : this.byKey.get(key);
  }
}

export function mayRead(access: Access, prototypeId: string): boolean {
  return access.prototype === undefined || access.prototype === prototypeId;
}
