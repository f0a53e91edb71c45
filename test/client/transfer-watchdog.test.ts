import { describe, expect, it } from 'vitest';
import { isRabbitError } from '../../src/core/errors.js';
import {
  RateMeter,
  STALL_DEFAULTS,
  watchdogClockOf,
  watchTransfer,
  type StallPolicy,
  type WatchdogClock,
} from '../../src/client/transfer-watchdog.js';
import { steppedClock } from '../helpers/stepped-clock.js';

/** A clock the test moves by hand; its timers fire as time passes. */
function fakeClock(): WatchdogClock & { advance(ms: number): void; timers: number } {
  let now = 0;
  const timers = new Set<{ every: number; next: number; tick: () => void }>();
  return {
    now: () => now,
    every(ms, tick) {
      const timer = { every: ms, next: now + ms, tick };
      timers.add(timer);
      return () => timers.delete(timer);
    },
    advance(ms) {
      const end = now + ms;
      for (;;) {
        const due = [...timers].filter((t) => t.next <= end).sort((a, b) => a.next - b.next)[0];
        if (!due) break;
        now = due.next;
        due.next += due.every;
        due.tick();
      }
      now = end;
    },
    get timers() {
      return timers.size;
    },
  };
}

/** Feeds `bytesPerSecond` in one chunk per second up to `seconds`; the first second it is stalled, or null. */
function firstStall(bytesPerSecond: number, seconds: number, policy = STALL_DEFAULTS): number | null {
  const meter = new RateMeter(policy, 0);
  for (let second = 1; second <= seconds; second++) {
    if (meter.stalled(second * 1000 - 1)) return second - 1;
    meter.add(bytesPerSecond, second * 1000 - 1);
    if (meter.stalled(second * 1000)) return second;
  }
  return null;
}

describe('minimum transfer rate (curl --speed-limit/--speed-time defaults: 1 KiB/s for 30 s)', () => {
  it.each([
    { rate: 0, expected: 30 },
    { rate: 1, expected: 30 },
    { rate: 1000, expected: 30 },
    { rate: 1023, expected: 30 },
    { rate: 1024, expected: null },
    { rate: 1100, expected: null },
    { rate: 1_000_000, expected: null },
  ])('$rate bytes/s for 2 minutes: stalled at second $expected', ({ rate, expected }) => {
    expect(firstStall(rate, 120)).toBe(expected);
  });

  it('a fast start followed by silence is stalled once the whole last window is slow, not before', () => {
    const meter = new RateMeter(STALL_DEFAULTS, 0);
    meter.add(10 * 1024 * 1024, 500);
    expect(meter.stalled(30_000)).toBe(false);
    expect(meter.stalled(30_999)).toBe(false);
    // The burst at 0.5 s is now more than a window ago.
    expect(meter.stalled(31_000)).toBe(true);
  });

  it('the limit and the window are both settable; 0 turns the check off', () => {
    expect(firstStall(5000, 60, { minBytesPerSecond: 10_000, windowMs: 5000 })).toBe(5);
    expect(firstStall(0, 600, { minBytesPerSecond: 0, windowMs: 5000 })).toBe(null);
  });
});

/** A body whose chunks the test pushes; destroy(error) makes the pending read fail, as undici's does. */
interface Body extends AsyncIterable<Buffer> {
  destroy(error?: Error): void;
}

function manualBody(): Body & { push(chunk: Buffer): void; end(): void; destroyed: Error | undefined } {
  const queue: (Buffer | null)[] = [];
  let wake: (() => void) | undefined;
  let failure: Error | undefined;
  const body = {
    destroyed: undefined as Error | undefined,
    push(chunk: Buffer) {
      queue.push(chunk);
      wake?.();
    },
    end() {
      queue.push(null);
      wake?.();
    },
    destroy(error?: Error) {
      failure = error ?? new Error('destroyed');
      body.destroyed = failure;
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (failure) throw failure;
        const next = queue.shift();
        if (next === null) return;
        if (next !== undefined) {
          yield next;
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
  return body;
}

/** Lets the reader take what was pushed before the clock moves on. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * One byte every two seconds for 28 seconds, `advance` moving the clock between them: never idle,
 * never done, and always under the default limit, so only the window's end can stop it.
 */
async function trickle(body: ReturnType<typeof manualBody>, advance: (ms: number) => void): Promise<void> {
  for (let t = 0; t < 28_000; t += 2000) {
    body.push(Buffer.from('x'));
    advance(2000);
    await flush();
  }
}

/** Reads a body as the spool does under watch: each chunk reported, the watch stopped at the end. */
async function readWatched(
  body: Body,
  source: string,
  clock: WatchdogClock,
  policy: StallPolicy = STALL_DEFAULTS,
): Promise<number> {
  const watch = watchTransfer((error) => body.destroy(error), policy, source, clock);
  let bytes = 0;
  try {
    for await (const chunk of body) {
      watch.seen(chunk.length);
      bytes += chunk.length;
    }
  } finally {
    watch.stop();
  }
  return bytes;
}

describe('watchTransfer', () => {
  it('aborts a trickling body with STALLED once it has been under the limit for the window (fake clock)', async () => {
    const clock = fakeClock();
    const inner = manualBody();
    const reading = readWatched(inner, '/rabbit/api/x.json', clock);
    await trickle(inner, (ms) => clock.advance(ms));
    expect(inner.destroyed).toBeUndefined();
    clock.advance(2000);
    const error: unknown = await reading.catch((e: unknown) => e);
    expect(isRabbitError(error, 'STALLED')).toBe(true);
    expect((error as Error).message).toMatch(/^GET \/rabbit\/api\/x\.json stalled/);
    // The shared timer stops at its next tick, with nothing left to watch.
    clock.advance(1000);
    expect(clock.timers).toBe(0);
  });

  it('lets a body that keeps the rate through, and stops its timer at the end', async () => {
    const clock = fakeClock();
    const inner = manualBody();
    const reading = readWatched(inner, '/x', clock);
    for (let second = 0; second < 90; second++) {
      inner.push(Buffer.alloc(2048));
      clock.advance(1000);
      await flush();
    }
    inner.end();
    expect(await reading).toBe(90 * 2048);
    expect(inner.destroyed).toBeUndefined();
    clock.advance(1000);
    expect(clock.timers).toBe(0);
  });

  it('names the method of the request whose answer stalled (a restore POST)', () => {
    const clock = fakeClock();
    const inner = manualBody();
    let aborted: unknown;
    const watch = watchTransfer((error) => (aborted = error), STALL_DEFAULTS, '/x', clock, 'POST');
    clock.advance(STALL_DEFAULTS.windowMs + 2000);
    expect(isRabbitError(aborted, 'STALLED')).toBe(true);
    expect((aborted as Error).message).toMatch(/^POST \/x stalled/);
    expect((aborted as { method?: string }).method).toBe('POST');
    watch.stop();
    expect(inner.destroyed).toBeUndefined();
  });

  it('a watch stopped early never aborts, and its timer stops', () => {
    const clock = fakeClock();
    const inner = manualBody();
    const watch = watchTransfer((error) => inner.destroy(error), STALL_DEFAULTS, '/x', clock);
    expect(clock.timers).toBe(1);
    watch.stop();
    clock.advance(60_000);
    expect(inner.destroyed).toBeUndefined();
    expect(clock.timers).toBe(0);
  });

  it('with the check turned off, nothing is watched and no timer starts', () => {
    const clock = fakeClock();
    const inner = manualBody();
    watchTransfer((error) => inner.destroy(error), { minBytesPerSecond: 0, windowMs: 1000 }, '/x', clock);
    clock.advance(60_000);
    expect(clock.timers).toBe(0);
    expect(inner.destroyed).toBeUndefined();
  });

  it('watches every transfer in flight with one timer, and still stops only the one that stalls', async () => {
    const clock = fakeClock();
    const slow = manualBody();
    const fast = manualBody();
    const slowReading = readWatched(slow, '/slow', clock).catch((e: unknown) => e);
    const fastReading = readWatched(fast, '/fast', clock);
    expect(clock.timers).toBe(1);
    for (let second = 0; second < 31; second++) {
      fast.push(Buffer.alloc(2048));
      clock.advance(1000);
      await flush();
    }
    expect(isRabbitError(await slowReading, 'STALLED')).toBe(true);
    expect(fast.destroyed).toBeUndefined();
    fast.end();
    expect(await fastReading).toBe(31 * 2048);
  });
});

describe("the watchdog on the run's clock (watchdogClockOf)", () => {
  it("checks again at every interval of the run's timer: a trickle is aborted once the window has passed on it", async () => {
    const run = steppedClock();
    const clock = watchdogClockOf(run.now, run.timer);
    const inner = manualBody();
    const reading = readWatched(inner, '/rabbit/api/x.json', clock);
    await trickle(inner, (ms) => run.step(ms));
    expect(inner.destroyed).toBeUndefined();
    run.step(2000);
    expect(isRabbitError(await reading.catch((e: unknown) => e), 'STALLED')).toBe(true);
    // With nothing left to watch, the next tick stops the ticking: no timer stays armed.
    run.step(1000);
    expect(run.pending).toBe(0);
  });

  it('a stopped watch leaves no timer armed, and never aborts', () => {
    const run = steppedClock();
    const clock = watchdogClockOf(run.now, run.timer);
    const inner = manualBody();
    const watch = watchTransfer((error) => inner.destroy(error), STALL_DEFAULTS, '/x', clock);
    expect(run.pending).toBe(1);
    watch.stop();
    run.step(60_000);
    expect(run.pending).toBe(0);
    expect(inner.destroyed).toBeUndefined();
  });
});
