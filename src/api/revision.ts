/** A milestone as the service serves it in a prototype's `versions.milestones`; the manifest keeps it as served. */
export interface Milestone {
  revision: number;
  created?: string;
  name?: string;
  user?: { id?: number; name?: string };
  [key: string]: unknown;
}

/**
 * The prototype's current revision: the highest milestone `revision`, since the live service did
 * not always list milestones in order. 0 when there is no usable milestone.
 */
export function currentRevision(prototype: unknown): { revision: number; milestone: Milestone | null } {
  const milestones = milestonesOf(prototype);
  let best: Milestone | null = null;
  for (const milestone of milestones) {
    if (best === null || milestone.revision > best.revision) best = milestone;
  }
  return { revision: best?.revision ?? 0, milestone: best };
}

export function milestonesOf(prototype: unknown): Milestone[] {
  const versions = (prototype as { versions?: { milestones?: unknown } } | null)?.versions;
  const list = versions?.milestones;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (m): m is Milestone =>
      typeof m === 'object' &&
      m !== null &&
      Number.isSafeInteger((m as { revision?: unknown }).revision) &&
      (m as { revision: number }).revision >= 0,
  );
}
