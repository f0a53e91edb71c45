/**
 * Tasks still open per prototype, so the crawl can say when a prototype is finished: its last task
 * has run and scheduled nothing more. A prototype's count only reaches zero once, because every
 * task of a prototype is scheduled by another of its tasks while that one is still open.
 */
export class OpenTasks {
  private readonly open = new Map<string, number>();

  opened(id: string): void {
    this.open.set(id, (this.open.get(id) ?? 0) + 1);
  }

  /** True when this was the prototype's last open task. */
  closed(id: string): boolean {
    const left = (this.open.get(id) ?? 1) - 1;
    if (left > 0) {
      this.open.set(id, left);
      return false;
    }
    this.open.delete(id);
    return true;
  }

  /** Prototypes with tasks still open, and how many. */
  entries(): [id: string, tasks: number][] {
    return [...this.open];
  }
}
