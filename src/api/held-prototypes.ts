import { compareIds } from './ids.js';
import { RabbitError } from '../core/errors.js';

/**
 * `--prototype` naming what is not there, refused the same way by every command that takes it
 * (export and backup against the account's lists, search, convert and restore against the
 * archive): before any work, with the ids that are there, so the next run can succeed. The
 * error's data says what the next step needs (cli/error-guide.ts): how many it does not name, the
 * archive that `ls` lists them from, and whether the command can do without --prototype.
 */

/** How many of the ids held a refusal names; past them it counts the rest. */
export const HELD_SHOWN = 5;

/** `it holds 3, 17 and 42`, or the first few and `and 12 more`: what --prototype can name instead. */
export function heldPrototypes(ids: readonly string[], shown = HELD_SHOWN): string {
  const sorted = [...ids].sort(compareIds);
  if (sorted.length === 0) return 'it holds no prototype';
  if (sorted.length === 1) return `it holds prototype ${sorted[0]}`;
  if (sorted.length <= shown) return `it holds prototypes ${sorted.slice(0, -1).join(', ')} and ${sorted.at(-1)}`;
  return `it holds prototypes ${sorted.slice(0, shown).join(', ')} and ${sorted.length - shown} more`;
}

export interface Holder {
  /** What was looked in, as the message names it: `the account`, `the archive`, `team.zip`. */
  name: string;
  /** The archive's path as given, when it is one: `rabbit-export ls` lists what it holds. */
  archive?: string;
  /** The command cannot do without --prototype (restore): the next step must not offer that. */
  required?: boolean;
}

/**
 * Throws NO_SUCH_PROTOTYPE (a usage error, exit 2) when `wanted` names an id `held` lacks.
 */
export function refuseUnheld(wanted: Iterable<string>, held: readonly string[], holder: Holder): void {
  const have = new Set(held);
  const missing = [...new Set(wanted)].filter((id) => !have.has(id)).sort(compareIds);
  if (missing.length > 0) throw noSuchPrototype(missing, held, holder);
}

/** The refusal of ids `holder` does not hold. */
export function noSuchPrototype(missing: readonly string[], held: readonly string[], holder: Holder): RabbitError {
  return new RabbitError(
    'NO_SUCH_PROTOTYPE',
    `${holder.name} holds no prototype ${missing.join(', ')}; ${heldPrototypes(held)}`,
    {
      data: {
        missing: [...missing],
        holder: holder.name,
        // Held but not named in the message: `ls` names them.
        unnamed: Math.max(0, held.length - HELD_SHOWN),
        ...(holder.archive !== undefined ? { archive: holder.archive } : {}),
        ...(holder.required === true ? { required: true } : {}),
      },
    },
  );
}
