/**
 * How big the whole export is, estimated from what the crawl has seen so far. The unit is a
 * resource: one body the export has to obtain (fetched, copied from an earlier archive, or
 * recorded as failed). The crawl knows every prototype after its first request, but not their
 * sizes: those are taken from the previous archive where there is one (exact for an unchanged
 * prototype, its last size for a changed one) and otherwise from the prototypes already finished.
 */
export interface PrototypeTally {
  /** Resources of this prototype handled so far. */
  done: number;
  /** Page metadata among them: what a page costs is learnt from the prototype itself. */
  pages: number;
  /** Its last task has finished: `done` is its exact size. */
  finished: boolean;
  /** Its resources in the previous archive (export --since, backup), when it had a record there. */
  previous?: number;
  /** How many pages its list of pages named, once that list was read. */
  pagesListed?: number;
}

export interface EstimateInput {
  /** Resources outside any prototype (the lists of prototypes), all done. */
  other: number;
  /** Null until the list of prototypes has been read: before that there is nothing to estimate. */
  prototypes: Iterable<PrototypeTally> | null;
}

export interface Estimate {
  done: number;
  /** Null while the list of prototypes is unknown. */
  total: number | null;
  /**
   * done / total, 0..1. Null while nothing sizes the prototypes yet (none finished, no page of
   * one with a known page count done, no previous archive): a guess from nothing would show a
   * percent that then stalls for minutes.
   */
  fraction: number | null;
}

export const ESTIMATE_DEFAULTS = {
  /** A prototype with no sample yet: its metadata and its three lists at least. */
  minimumPrototype: 4,
} as const;

/**
 * The estimate of the whole. A finished prototype counts exactly. One with a previous size counts
 * as that (exact when unchanged). One whose pages are listed and partly done counts as what its
 * pages so far cost, times its pages. Any other counts as the finished ones' average (pages per
 * prototype times what a page costs). One that has outgrown its guess counts as what it has done
 * plus one page more.
 */
export function estimateTotal(input: EstimateInput): Estimate {
  if (input.prototypes === null) return { done: input.other, total: null, fraction: null };
  const tallies = [...input.prototypes];
  const finished = tallies.filter((tally) => tally.finished);
  const step = pageCost(finished);
  const typical = typicalSize(tallies, finished, step);
  let done = input.other;
  let total = input.other;
  let informed = tallies.length === 0 || finished.length > 0;
  for (const tally of tallies) {
    done += tally.done;
    if (tally.finished) {
      total += tally.done;
      continue;
    }
    const sized = tally.previous ?? extrapolate(tally, step);
    if (sized !== undefined) informed = true;
    const guess = Math.max(ESTIMATE_DEFAULTS.minimumPrototype, sized ?? typical);
    total += tally.done < guess ? guess : tally.done + step;
  }
  total = Math.round(total);
  return { done, total, fraction: !informed ? null : total > 0 ? Math.min(1, done / total) : 1 };
}

/** What a prototype will cost judging by its own pages done so far, once it is known how many it has. */
function extrapolate(tally: PrototypeTally, step: number): number | undefined {
  if (!tally.pagesListed || tally.pages === 0) return undefined;
  const perPage = tally.done / tally.pages;
  return Math.max(tally.done + (tally.pages < tally.pagesListed ? perPage : step), perPage * tally.pagesListed);
}

/**
 * The size of a prototype nothing is known of: the average finished one; before any has finished,
 * the previous archive's average, else the average of those sized by their own pages, else the
 * largest seen so far.
 */
function typicalSize(tallies: readonly PrototypeTally[], finished: readonly PrototypeTally[], step: number): number {
  if (finished.length > 0) return mean(finished.map((tally) => tally.done));
  const previous = tallies.flatMap((tally) => (tally.previous === undefined ? [] : [tally.previous]));
  if (previous.length > 0) return mean(previous);
  const extrapolated = tallies.flatMap((tally) => extrapolate(tally, step) ?? []);
  if (extrapolated.length > 0) return mean(extrapolated);
  return Math.max(ESTIMATE_DEFAULTS.minimumPrototype, ...tallies.map((tally) => tally.done));
}

/** Resources per page of the finished prototypes (a page brings its renderings, elements and discussions). */
function pageCost(finished: readonly PrototypeTally[]): number {
  const pages = finished.reduce((sum, tally) => sum + tally.pages, 0);
  if (pages === 0) return 1;
  return Math.max(1, Math.round(finished.reduce((sum, tally) => sum + tally.done, 0) / pages));
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

/**
 * The fraction shown: it may hold, it does not go back. An estimate that grows (a prototype bigger
 * than its guess) would otherwise move the bar backwards, which reads as lost work; the time left
 * is computed from the estimate itself and stays honest.
 */
export function shownFraction(previous: number | null, estimate: number | null): number | null {
  if (estimate === null) return previous;
  return previous === null ? estimate : Math.max(previous, estimate);
}
