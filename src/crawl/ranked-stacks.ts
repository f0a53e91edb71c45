/**
 * Pending items by group, for the frontier's order: the group of lowest rank goes first (ties: the
 * group seen first), and within a group the newest item. Ranks change while items wait (a
 * prototype's lists tell how much is left of it), so the groups with items are kept in a binary
 * heap that knows where each group sits: a new rank moves its group in O(log groups), and nothing
 * stale is left behind however often ranks change.
 */
interface Group<T> {
  readonly order: number;
  rank: number;
  readonly items: T[];
  /** Its place in the heap; -1 while it has no items. */
  at: number;
}

export class RankedStacks<T> {
  private readonly groups = new Map<string, Group<T>>();
  private readonly heap: Group<T>[] = [];
  private count = 0;
  private seen = 0;

  constructor(private readonly defaultRank = 0) {}

  get size(): number {
    return this.count;
  }

  push(name: string, item: T): void {
    const group = this.group(name);
    group.items.push(item);
    this.count++;
    if (group.at >= 0) return;
    group.at = this.heap.length;
    this.heap.push(group);
    this.siftUp(group.at);
  }

  /** The newest item of the first group, or undefined when nothing waits. */
  pop(): T | undefined {
    const group = this.heap[0];
    if (group === undefined) return undefined;
    const item = group.items.pop() as T;
    this.count--;
    if (group.items.length === 0) this.removeTop();
    return item;
  }

  rank(name: string, value: number): void {
    const group = this.group(name);
    if (group.rank === value) return;
    const earlier = value < group.rank;
    group.rank = value;
    if (group.at < 0) return;
    if (earlier) this.siftUp(group.at);
    else this.siftDown(group.at);
  }

  /** Forgets a group's rank once nothing more will come to it (a prototype done). */
  forget(name: string): void {
    const group = this.groups.get(name);
    if (group !== undefined && group.at < 0) this.groups.delete(name);
  }

  clear(): void {
    for (const group of this.heap) {
      group.items.length = 0;
      group.at = -1;
    }
    this.heap.length = 0;
    this.count = 0;
  }

  private group(name: string): Group<T> {
    let group = this.groups.get(name);
    if (group === undefined) {
      group = { order: this.seen++, rank: this.defaultRank, items: [], at: -1 };
      this.groups.set(name, group);
    }
    return group;
  }

  private before(a: Group<T>, b: Group<T>): boolean {
    return a.rank < b.rank || (a.rank === b.rank && a.order < b.order);
  }

  private removeTop(): void {
    const top = this.heap[0] as Group<T>;
    const last = this.heap.pop() as Group<T>;
    top.at = -1;
    if (last === top) return;
    this.heap[0] = last;
    last.at = 0;
    this.siftDown(0);
  }

  private siftUp(at: number): void {
    const group = this.heap[at] as Group<T>;
    while (at > 0) {
      const parentAt = (at - 1) >> 1;
      const parent = this.heap[parentAt] as Group<T>;
      if (!this.before(group, parent)) break;
      this.place(parent, at);
      at = parentAt;
    }
    this.place(group, at);
  }

  private siftDown(at: number): void {
    const group = this.heap[at] as Group<T>;
    const length = this.heap.length;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= length) break;
      const right = left + 1;
      let child = this.heap[left] as Group<T>;
      let childAt = left;
      if (right < length && this.before(this.heap[right] as Group<T>, child)) {
        child = this.heap[right] as Group<T>;
        childAt = right;
      }
      if (!this.before(child, group)) break;
      this.place(child, at);
      at = childAt;
    }
    this.place(group, at);
  }

  private place(group: Group<T>, at: number): void {
    this.heap[at] = group;
    group.at = at;
  }
}
