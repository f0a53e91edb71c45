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
  const results = readAhead(items, ahead, start);
  for (const item of items) yield [item, await (results.next() as Promise<R>)];
}

/**
 * The window of `inOrder` without a generator of its own, for a caller that hands the results on
 * from one: each generator a result passes through costs it turns of the event loop, and the
 * elements of one page come by the thousand. `next()` is the next item's result, undefined past
 * the last; the window is filled before each is handed over.
 */
export function readAhead<T, R>(
  items: readonly T[],
  ahead: number,
  start: (item: T) => Promise<R>,
): { next(): Promise<R> | undefined } {
  const window: Promise<R>[] = [];
  let started = 0;
  let taken = 0;
  return {
    next() {
      if (taken >= items.length) return undefined;
      for (; started < items.length && started < taken + Math.max(1, ahead); started++) {
        const result = start(items[started] as T);
        // Awaited at its turn; until then a failure must not count as unhandled.
        result.catch(() => undefined);
        window.push(result);
      }
      taken++;
      return window.shift();
    },
  };
}
