/**
 * `start(item)` for each item, up to `ahead` of them at once, results handed back in the items'
 * order: reads of many small bodies overlap (each waits on the file system's thread pool), and
 * the consumer still sees one item at a time, in order, with at most `ahead` results in memory. A
 * failure surfaces when its item's turn comes, as a sequential loop would have it.
 */
export async function* inOrder<T, R>(
  items: readonly T[],
  ahead: number,
  start: (item: T) => Promise<R>,
): AsyncGenerator<[T, R]> {
  const window: Promise<R>[] = [];
  let next = 0;
  const fill = (upTo: number): void => {
    for (; next < items.length && next < upTo; next++) {
      const started = start(items[next] as T);
      // Awaited at its turn; until then a failure must not count as unhandled.
      started.catch(() => undefined);
      window.push(started);
    }
  };
  for (let i = 0; i < items.length; i++) {
    fill(i + Math.max(1, ahead));
    yield [items[i] as T, await (window.shift() as Promise<R>)];
  }
}
