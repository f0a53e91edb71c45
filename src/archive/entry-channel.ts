/**
 * A queue that one side fills while the other side takes from it: the crawl
 * pushes each stored body as it lands, the zip writer pulls them one at a time. It holds only
 * small records (where a body is), so it may run ahead of the writer without memory to speak of.
 */
export class EntryChannel<T> {
  private items: T[] = [];
  private head = 0;
  private closed = false;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;

  push(item: T): void {
    if (this.closed) throw new Error('internal: push after close');
    this.items.push(item);
    this.signal();
  }

  close(): void {
    this.closed = true;
    this.signal();
  }

  /** The reader throws `error` at its next read: the writer gives up and removes its temp file. */
  fail(error: unknown): void {
    this.failure ??= { error };
    this.closed = true;
    this.signal();
  }

  /**
   * The next item, waiting only when there is none yet; undefined once closed and drained. Items
   * already queued are handed over without a trip through the event loop each, which an async
   * generator would cost for every one of a million entries.
   */
  next(): T | undefined | Promise<T | undefined> {
    if (this.failure) throw this.failure.error;
    if (this.head < this.items.length) {
      const item = this.items[this.head++] as T;
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      return item;
    }
    if (this.closed) return undefined;
    return new Promise<void>((resolve) => (this.wake = resolve)).then(() => this.next());
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
