import type { FileOwner } from './manifest-stream.js';
import type { FileEntry, ManifestError, PrototypeRecord } from './types.js';
import { prototypeOf } from '../api/entry-paths.js';

/** One prototype of a previous archive: what exporting it cost then, for estimating this run. */
export interface PreviousCost {
  id: string;
  /** Resources archived from the service (generated viewer files not counted). */
  files: number;
  bytes: number;
  /** Resources that failed in that run: requested again this time. */
  errors: number;
  revision: number;
  lastModification: number | null;
}

/** The manifest visitor that counts; each call is synchronous. */
interface CostVisitor {
  file(entry: FileEntry, owner: FileOwner): void;
  prototype(id: string, record: PrototypeRecord): void;
  error(error: ManifestError): void;
}

/**
 * Per prototype of a previous archive, its resources and bytes under the revision it recorded,
 * counted by a manifest visitor: export --since streams that manifest anyway, so it need not be
 * read a second time. An unchanged prototype will cost exactly that again; a changed one about
 * that.
 */
export function costTally(): { visitor: CostVisitor; costs(): PreviousCost[] } {
  const errors = new Map<string, number>();
  const costs: PreviousCost[] = [];
  // The current prototype's counts per revision as its entries stream by: which revision the
  // record names is known only when the record closes.
  let counted = new Map<string, { files: number; bytes: number }>();
  return {
    visitor: {
      file(entry, of) {
        if (of === null || prototypeOf(entry.source) !== of.prototype) return;
        const tally = counted.get(of.revision) ?? { files: 0, bytes: 0 };
        tally.files++;
        tally.bytes += entry.size;
        counted.set(of.revision, tally);
      },
      prototype(id, record) {
        const tally = counted.get(String(record.revision)) ?? { files: 0, bytes: 0 };
        counted = new Map();
        costs.push({ id, ...tally, errors: 0, revision: record.revision, lastModification: record.lastModification });
      },
      error(error) {
        const id = prototypeOf(error.source);
        if (id !== undefined) errors.set(id, (errors.get(id) ?? 0) + 1);
      },
    },
    costs: () => costs.map((cost) => ({ ...cost, errors: errors.get(cost.id) ?? 0 })),
  };
}

/**
 * What each prototype is expected to cost this run, in resources: those it had and those that
 * failed (asked for again). The crawl does the cheapest first, so a run that must stop early
 * (--max-duration) ends with as many whole prototypes as it can.
 */
export function expectedCosts(costs: readonly PreviousCost[]): Map<string, number> {
  return new Map(costs.map((cost) => [cost.id, cost.files + cost.errors]));
}
