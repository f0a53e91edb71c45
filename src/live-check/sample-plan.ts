import { createHash, randomInt } from 'node:crypto';
import { RabbitError } from '../core/errors.js';

/** `--sample 5%` or `--sample 200`: a share of the resources, or how many; everything by default. */
export type SampleSize = { percent: number } | { count: number };

export const EVERYTHING: SampleSize = { percent: 100 };

export function parseSampleSize(text: string, flag = '--sample'): SampleSize {
  const percent = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(text);
  if (percent) {
    const value = Number(percent[1]);
    if (value > 0 && value <= 100) return { percent: value };
  } else if (/^\s*\d+\s*$/.test(text) && Number(text) >= 1 && Number.isSafeInteger(Number(text))) {
    return { count: Number(text) };
  }
  throw new RabbitError('USAGE', `${flag} takes a share (e.g. 5%, up to 100%) or a number of resources (e.g. 200)`);
}

export function formatSampleSize(size: SampleSize): string {
  return 'percent' in size ? `${size.percent}%` : String(size.count);
}

/** A seed for a run that was given none: printed, so that `--seed` repeats the same sample. */
export function newSeed(): number {
  return randomInt(0, 2 ** 32);
}

export function parseSeed(text: string): number {
  const value = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || !Number.isSafeInteger(value) || value >= 2 ** 32)
    throw new RabbitError('USAGE', '--seed takes a whole number from 0 to 4294967295');
  return value;
}

/**
 * A stratified random sample: every stratum (one kind of resource of one prototype) is counted
 * first, then gets its share of the sample, at least one resource, so a small prototype or a rare
 * kind is never left out by chance. Within a stratum the resources with the lowest scores are
 * taken; a resource's score is a hash of the seed and its archive path, so the same seed picks the
 * same resources of the same archive whatever order the manifest lists them in. What is kept in
 * memory is the sample, not the archive.
 */
export class StratifiedSample<T> {
  private readonly counts = new Map<string, number>();
  private quotas: Map<string, number> | undefined;
  private readonly kept = new Map<string, { score: number; path: string; item: T }[]>();

  constructor(
    private readonly size: SampleSize,
    private readonly seed: number,
  ) {}

  /** First pass: `count` resources of `stratum` exist. */
  count(stratum: string, count = 1): void {
    this.counts.set(stratum, (this.counts.get(stratum) ?? 0) + count);
  }

  /** Second pass: `item` at `path` is considered for the sample of its stratum. */
  offer(stratum: string, path: string, item: T): void {
    const quota = this.quotaOf(stratum);
    if (quota === 0) return;
    let list = this.kept.get(stratum);
    if (!list) this.kept.set(stratum, (list = []));
    list.push({ score: score(this.seed, path), path, item });
    if (list.length >= 2 * quota + 16) trim(list, quota);
  }

  /** The resources counted in the first pass. */
  get population(): number {
    let total = 0;
    for (const count of this.counts.values()) total += count;
    return total;
  }

  /** The sample, stratum by stratum in name order, each in archive path order. */
  chosen(): T[] {
    const out: T[] = [];
    for (const stratum of [...this.kept.keys()].sort()) {
      const list = this.kept.get(stratum) as { score: number; path: string; item: T }[];
      trim(list, this.quotaOf(stratum));
      list.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      out.push(...list.map((entry) => entry.item));
    }
    return out;
  }

  private quotaOf(stratum: string): number {
    this.quotas ??= quotas(this.counts, this.size);
    return this.quotas.get(stratum) ?? 0;
  }
}

function quotas(counts: ReadonlyMap<string, number>, size: SampleSize): Map<string, number> {
  let total = 0;
  for (const count of counts.values()) total += count;
  const out = new Map<string, number>();
  for (const [stratum, count] of counts) {
    const share = 'percent' in size ? (count * size.percent) / 100 : (count * size.count) / Math.max(1, total);
    out.set(stratum, Math.min(count, Math.max(1, Math.ceil(share - 1e-9))));
  }
  return out;
}

function trim(list: { score: number; path: string }[], quota: number): void {
  list.sort((a, b) => a.score - b.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  list.length = Math.min(list.length, quota);
}

/** 48 bits of SHA-256 over the seed and the path: uniform, and the same on every machine. */
function score(seed: number, path: string): number {
  return createHash('sha256').update(`${seed}\0${path}`).digest().readUIntBE(0, 6);
}
