import type { AttemptCounts } from './fetch-setup.js';
import type { RunStats } from '../manifest/types.js';

/**
 * The counts of one export, in one place: what was fetched, filed and cut off. Each part of the
 * run tells it what happened through a method; the progress events and the report read the totals.
 */
export class RunCounters implements AttemptCounts {
  /** Requests, retries and bytes, attempt by attempt; `files` is set once the archive's entries are known. */
  private readonly stats: RunStats = { requests: 0, retries: 0, bytes: 0, files: 0 };
  private wire = 0;
  private added = 0;
  private cutOffs = 0;

  /** A request will be sent again. */
  retried(): void {
    this.stats.retries++;
  }

  /** An answer was read: its body's bytes as stored, and as they came over the wire (before Content-Encoding was undone). */
  answered(bytes: number, wireBytes: number): void {
    this.stats.requests++;
    this.stats.bytes += bytes;
    this.wire += wireBytes;
  }

  /** A file went into the archive. */
  fileAdded(): void {
    this.added++;
  }

  /** A resource failed for good; `cutOff` when it was the run's stop (the deadline, an outage past patience). */
  failed(cutOff: boolean): void {
    if (cutOff) this.cutOffs++;
  }

  /** A page view failed its final check and was replaced by the page's text. */
  viewReplaced(): void {
    this.stats.viewsReplaced = (this.stats.viewsReplaced ?? 0) + 1;
  }

  /** The run's stats, `files` set to the archive's count of entries from the crawl and the viewer. */
  finalStats(files: number): RunStats {
    this.stats.files = files;
    return this.stats;
  }

  /** The requests, retries and bytes so far (`files` is set by finalStats). */
  get current(): Readonly<RunStats> {
    return this.stats;
  }

  get wireBytes(): number {
    return this.wire;
  }

  get filesAdded(): number {
    return this.added;
  }

  /** Errors of the stop itself (DEADLINE, or SERVICE_DOWN past the patience): work left, not failures. */
  get stopErrors(): number {
    return this.cutOffs;
  }
}
