import { compareIds } from './ids.js';
import { RabbitError } from '../core/errors.js';

/**
 * `--prototype` naming what is not there, refused the same way by every command that takes it
 * (export and backup against the account's lists, search, convert and restore against the
 * archive): before any work, with the ids that are there, so the next run can succeed.
 */

/** `it holds 3, 17 and 42`, or the first few and `and 12 more`: what --prototype can name instead. */
export function heldPrototypes(ids: readonly string[], shown = 5): string {
  const sorted = [...ids].sort(compareIds);
  if (sorted.length === 0) return 'it holds no prototype';
  if (sorted.length === 1) return `it holds prototype ${sorted[0]}`;
  if (sorted.length <= shown) return `it holds prototypes ${sorted.slice(0, -1).join(', ')} and ${sorted.at(-1)}`;
  return `it holds prototypes ${sorted.slice(0, shown).join(', ')} and ${sorted.length - shown} more (rabbit-export ls lists them)`;
}

/**
 * Throws NO_SUCH_PROTOTYPE (a usage error, exit 2) when `wanted` names an id `held` lacks.
 * `holder` is what was looked in: `the account`, `team.zip`.
 */
export function refuseUnheld(wanted: Iterable<string>, held: readonly string[], holder: string): void {
  const have = new Set(held);
  const missing = [...new Set(wanted)].filter((id) => !have.has(id)).sort(compareIds);
  if (missing.length > 0) throw noSuchPrototype(missing, held, holder);
}

/** The refusal of ids `holder` does not hold. */
export function noSuchPrototype(missing: readonly string[], held: readonly string[], holder: string): RabbitError {
  return new RabbitError(
    'NO_SUCH_PROTOTYPE',
    `${holder} holds no prototype ${missing.join(', ')}; ${heldPrototypes(held)}`,
    {
      data: { missing: [...missing], holder },
    },
  );
}
