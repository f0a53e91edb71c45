/**
 * Tasks still open per prototype, so the crawl can say when a prototype is finished: its last task
 * has run and scheduled nothing more. A prototype's count only reaches zero once, because every
 * task of a prototype is scheduled by another of its tasks while that one is still open. The tasks
 * already closed are counted too: with what the prototype cost last time, they tell what is left.
 */
export class OpenTasks {
  private readonly open = new Map<string, { open: number; closed: number }>();

  opened(id: string): void {
    const counts = this.open.get(id);
    if (counts) counts.open++;
    else this.open.set(id, { open: 1, closed: 0 });
  }

  /** True when this was the prototype's last open task. */
  closed(id: string): boolean {
    const counts = this.open.get(id);
    if (counts && counts.open > 1) {
      counts.open--;
      counts.closed++;
      return false;
    }
    this.open.delete(id);
    return true;
  }

  /**
   * The tasks a prototype has left: those open, or more when it cost `expected` last time and
   * fewer than that have closed (its lists not all read yet).
   */
  left(id: string, expected = 0): number {
    const counts = this.open.get(id);
    return counts ? Math.max(counts.open, expected - counts.closed) : 0;
  }

  /** Prototypes with tasks still open, and how many. */
  entries(): [id: string, tasks: number][] {
    return [...this.open].map(([id, counts]) => [id, counts.open]);
  }
}
