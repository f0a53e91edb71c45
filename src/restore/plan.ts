import type { Attributes } from './element-shape.js';
import { canonicalJson, changedAttributes, extraAttributes } from './element-shape.js';

/**
 * What a restore does to one page or layer, decided from the archived and the live elements
 * alone: a pure function, so every rule below is a row in a table test.
 *
 *  - an archived element live under its own id is compared: equal -> unchanged, else updated;
 *  - one whose id is gone is looked for under another id, first where an earlier restore's
 *    journal says it went, then by content (an earlier restore whose answer was lost, or whose
 *    journal is gone): found -> compared as above, not created again;
 *  - the rest are created;
 *  - live elements nothing archived accounts for are deleted with `prune`, else only reported.
 */
export interface ElementState {
  id: string;
  /** Every attribute but `id`. */
  attributes: Attributes;
}

export type ParentKind = 'page' | 'layer';

export type PlannedWrite =
  | { op: 'create'; parent: string; archivedId: string; attributes: Attributes }
  | { op: 'update'; parent: string; archivedId: string; id: string; attributes: Attributes; changed: string[] }
  | { op: 'delete'; parent: string; id: string };

export interface ParentPlan {
  parent: string;
  /** Creates in archive order (they land at the end, in that order), then updates, then deletes. */
  writes: PlannedWrite[];
  unchanged: string[];
  /** Archived id -> the live id it was found under, for elements found under another id. */
  found: Record<string, string>;
  /** Live attributes the archive lacks: an update cannot remove them by leaving them out. */
  extraAttributes: Array<{ id: string; names: string[] }>;
  /** Live elements the archive does not account for, left in place (no prune). */
  strays: string[];
}

export interface PlanInput {
  parent: string;
  archived: readonly ElementState[];
  live: readonly ElementState[];
  /** Archived id -> live id, from the journal of an earlier restore of the same prototype. */
  known?: ReadonlyMap<string, string>;
  /**
   * Ids the archive lists but could not give back (a damaged or missing body): their live
   * elements are left alone, never deleted as strays nor taken for another element.
   */
  keep?: ReadonlySet<string>;
  prune: boolean;
}

export function planParent(input: PlanInput): ParentPlan {
  const { parent } = input;
  const liveById = new Map(input.live.map((element) => [element.id, element]));
  const archivedIds = new Set([...input.archived.map((element) => element.id), ...(input.keep ?? [])]);
  const claimed = new Set<string>(input.keep ?? []);
  const matches = new Map<string, ElementState>();
  const found: Record<string, string> = {};
  const claim = (archivedId: string, live: ElementState): void => {
    claimed.add(live.id);
    matches.set(archivedId, live);
    if (live.id !== archivedId) found[archivedId] = live.id;
  };
  // A live element under another id may stand for an archived one only if no archived element
  // has that id itself.
  const free = (id: string | undefined): ElementState | undefined => {
    if (id === undefined || claimed.has(id) || archivedIds.has(id)) return undefined;
    return liveById.get(id);
  };

  for (const element of input.archived) {
    const live = liveById.get(element.id);
    if (live !== undefined) claim(element.id, live);
  }
  for (const element of input.archived) {
    if (matches.has(element.id)) continue;
    const live = free(input.known?.get(element.id));
    if (live !== undefined) claim(element.id, live);
  }
  // Exact content first, so an element the service gave extra attributes is not taken by an
  // archived element that only resembles it while its exact twin is still unmatched.
  const candidates = input.live.filter((live) => !archivedIds.has(live.id));
  for (const exact of [true, false]) {
    for (const element of input.archived) {
      if (matches.has(element.id)) continue;
      const wanted = canonicalJson(element.attributes);
      const live = candidates.find(
        (c) => !claimed.has(c.id) && (exact ? canonicalJson(c.attributes) === wanted : contains(c, element)),
      );
      if (live !== undefined) claim(element.id, live);
    }
  }

  const creates: PlannedWrite[] = [];
  const updates: PlannedWrite[] = [];
  const unchanged: string[] = [];
  const extras: ParentPlan['extraAttributes'] = [];
  for (const element of input.archived) {
    const live = matches.get(element.id);
    if (live === undefined) {
      creates.push({ op: 'create', parent, archivedId: element.id, attributes: element.attributes });
      continue;
    }
    const extra = extraAttributes(element.attributes, live.attributes);
    if (extra.length > 0) extras.push({ id: live.id, names: extra });
    const changed = changedAttributes(element.attributes, live.attributes);
    if (changed.length === 0) unchanged.push(live.id);
    else
      updates.push({
        op: 'update',
        parent,
        archivedId: element.id,
        id: live.id,
        attributes: element.attributes,
        changed,
      });
  }
  const deletes: PlannedWrite[] = [];
  const strays: string[] = [];
  for (const live of input.live) {
    if (claimed.has(live.id)) continue;
    if (input.prune) deletes.push({ op: 'delete', parent, id: live.id });
    else strays.push(live.id);
  }
  return { parent, writes: [...creates, ...updates, ...deletes], unchanged, found, extraAttributes: extras, strays };
}

/** Every archived attribute is live with the same value; the live one may have more. */
export function contains(live: ElementState, archived: ElementState): boolean {
  return changedAttributes(archived.attributes, live.attributes).length === 0;
}
