import type { RunStats } from '../manifest/types.js';

/**
 * The counts of one export, in one place: what was fetched, filed and cut off. Each part of the
 * run tells it what happened through a method; the progress events and the report read the totals.
 */
export class RunCounters {
  /**
   * Requests, retries and bytes as fetch-setup counts them attempt by attempt (it is handed this
   * object); `files` is set once the archive's entries are known.
   */
  readonly stats: RunStats = { requests: 0, retries: 0, bytes: 0, files: 0 };
  /** Bytes of the answers' bodies as they came over the wire, before Content-Encoding was undone (fetch-setup counts them). */
  readonly wire = { bytes: 0 };
  private added = 0;
  private cutOffs = 0;

  /** A file went into the archive. */
  fileAdded(): void {
    this.added++;
  }

  /** A resource failed for good; `cutOff` when it was the run's stop (the deadline, an outage past patience). */
  failed(cutOff: boolean): void {
    if (cutOff) this.cutOffs++;
  }

  /** The run's stats, `files` set to the archive's count of entries from the crawl and the viewer. */
  finalStats(files: number): RunStats {
    this.stats.files = files;
    return this.stats;
  }

  get filesAdded(): number {
    return this.added;
  }

  /** Errors of the stop itself (DEADLINE, or SERVICE_DOWN past the patience): work left, not failures. */
  get stopErrors(): number {
    return this.cutOffs;
  }
}
