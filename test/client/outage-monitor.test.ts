import { describe, expect, it } from 'vitest';
import { isRabbitError, type RabbitError } from '../../src/core/errors.js';
import { OutageMonitor, type OutageEvent, type ProbeResult } from '../../src/client/outage-monitor.js';
import { OUTAGE_DEFAULTS, type OutagePolicy } from '../../src/client/outage-policy.js';

/** A clock that moves only when the test says so; sleeps end when it passes their time. */
function fakeTime() {
  let now = 0;
  const timers = new Set<{ at: number; resolve: () => void }>();
  const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  return {
    now: () => now,
    sleep(ms: number, signal: AbortSignal): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = { at: now + ms, resolve };
        timers.add(timer);
        signal.addEventListener(
          'abort',
          () => {
            timers.delete(timer);
            reject(signal.reason as Error);
          },
          { once: true },
        );
      });
    },
    /** Moves the clock to `to`, ending each sleep due on the way at its own time. */
    async until(to: number): Promise<void> {
      await flush();
      for (;;) {
        const due = [...timers].filter((t) => t.at <= to).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        timers.delete(due);
        now = Math.max(now, due.at);
        due.resolve();
        await flush();
        await flush();
      }
      now = Math.max(now, to);
      await flush();
    },
  };
}

function setUp(probeAnswers: ProbeResult[], policy: Partial<OutagePolicy> = {}) {
  const time = fakeTime();
  const run = new AbortController();
  const events: OutageEvent[] = [];
  const held: string[] = [];
  const probes: number[] = [];
  let gaveUp: RabbitError | undefined;
  const monitor = new OutageMonitor({
    policy: { ...OUTAGE_DEFAULTS, ...policy },
    now: time.now,
    sleep: time.sleep,
    signal: run.signal,
    probe: () => {
      probes.push(time.now());
      return Promise.resolve(probeAnswers.shift() ?? { back: true });
    },
    hold: () => held.push('hold'),
    release: () => held.push('release'),
    onEvent: (event) => events.push(event),
    giveUp: (error) => {
      gaveUp = error;
      run.abort(error);
    },
  });
  return { time, run, events, held, probes, monitor, gaveUp: () => gaveUp };
}

const DOWN: ProbeResult = { back: false, signal: 'transport', answer: 'ECONNREFUSED' };

describe('OutageMonitor', () => {
  it('pauses the run after failures over several resources, probes with a growing wait, and resumes when one answers', async () => {
    const { time, events, held, probes, monitor } = setUp([DOWN, DOWN]);
    monitor.answered();
    expect(monitor.failed('/a', 'transport')).toBe('go-on');
    expect(monitor.failed('/b', 'transport')).toBe('go-on');
    expect(monitor.failed('/c', 'transport')).toBe('outage');
    expect(monitor.paused).toBe(true);
    expect(held).toEqual(['hold']);
    const waiting = monitor.waitForService(new AbortController().signal);
    await time.until(10_000);
    // Probes 1 s, then 2 s, then 4 s apart; the third answers.
    expect(probes).toEqual([1_000, 3_000, 7_000]);
    await expect(waiting).resolves.toBe(true);
    expect(held).toEqual(['hold', 'release']);
    expect(events.map((event) => event.state)).toEqual(['started', 'probe', 'probe', 'back']);
    expect(events[0]).toMatchObject({ since: 0, reason: 'unreachable', nextTryAt: 1_000 });
    expect(events[1]).toMatchObject({ probes: 1, answer: 'ECONNREFUSED', nextTryAt: 3_000 });
    expect(events[3]).toMatchObject({ state: 'back', durationMs: 7_000, probes: 3 });
    expect(monitor.summary()).toEqual({ count: 1, totalMs: 7_000, gaveUp: false });
  });

  it('never pauses before the service has answered once (a wrong --base-url fails fast)', async () => {
    const { time, events, monitor } = setUp([]);
    for (const source of ['/a', '/b', '/c', '/d', '/e']) expect(monitor.failed(source, 'transport')).toBe('go-on');
    await time.until(5_000);
    expect(events).toEqual([]);
    expect(monitor.paused).toBe(false);
  });

  it('pauses at once when the very first answer asks to wait, and gives up when the wait outlasts patience', async () => {
    const THROTTLED: ProbeResult = { back: false, signal: 'throttle', answer: 'HTTP 429', retryAfterMs: 15_000 };
    const { time, run, events, held, probes, monitor, gaveUp } = setUp([THROTTLED], { patienceMs: 5_000 });
    expect(monitor.failed('/list', 'throttle', 20_000)).toBe('outage');
    expect(held).toEqual(['hold']);
    const settled = monitor.waitForService(run.signal).catch((error: unknown) => error);
    // Not the 20 s asked for: the one probe goes as patience runs out.
    expect(events[0]).toMatchObject({ state: 'started', reason: 'throttled', since: 0, nextTryAt: 5_000 });
    await time.until(30_000);
    expect(probes).toEqual([5_000]);
    expect(isRabbitError(gaveUp(), 'SERVICE_DOWN')).toBe(true);
    expect(isRabbitError(await settled, 'SERVICE_DOWN')).toBe(true);
    expect(events.map((event) => event.state)).toEqual(['started', 'gave-up']);
  });

  it('... and resumes when the first probe after the asked wait finds the service back', async () => {
    const { time, events, probes, monitor } = setUp([{ back: true }]);
    expect(monitor.failed('/list', 'gateway')).toBe('go-on');
    expect(monitor.failed('/list', 'throttle')).toBe('go-on'); // a 429 without Retry-After does not say how long
    expect(monitor.failed('/list', 'throttle', 4_000)).toBe('outage');
    const waiting = monitor.waitForService(new AbortController().signal);
    await time.until(10_000);
    expect(probes).toEqual([4_000]);
    await expect(waiting).resolves.toBe(false);
    expect(events.map((event) => event.state)).toEqual(['started', 'back']);
  });

  it('an answer between failures resets the count', () => {
    const { monitor } = setUp([]);
    monitor.answered();
    monitor.failed('/a', 'gateway');
    monitor.failed('/b', 'gateway');
    monitor.answered();
    expect(monitor.failed('/c', 'gateway')).toBe('go-on');
    expect(monitor.failed('/d', 'gateway')).toBe('go-on');
    expect(monitor.failed('/e', 'gateway')).toBe('outage');
  });

  it('gives up when patience runs out: SERVICE_DOWN, and the waiting requests hear it through the signal', async () => {
    const { time, run, events, probes, monitor, gaveUp } = setUp([DOWN, DOWN, DOWN, DOWN], { patienceMs: 5_000 });
    monitor.answered();
    for (const source of ['/a', '/b', '/c']) monitor.failed(source, 'transport');
    const waiting = monitor.waitForService(run.signal);
    const settled = waiting.catch((error: unknown) => error);
    await time.until(20_000);
    // 1 s, 3 s, then the last one exactly when patience runs out.
    expect(probes).toEqual([1_000, 3_000, 5_000]);
    expect(isRabbitError(gaveUp(), 'SERVICE_DOWN')).toBe(true);
    expect(gaveUp()?.errorClass).toBe('resource');
    expect(isRabbitError(await settled, 'SERVICE_DOWN')).toBe(true);
    expect(events.at(-1)).toMatchObject({ state: 'gave-up', durationMs: 5_000 });
    expect(monitor.summary().gaveUp).toBe(true);
  });

  it('a pause never outlives the run: --max-duration or Ctrl-C end the wait and the probing', async () => {
    const { time, run, probes, monitor } = setUp([DOWN, DOWN, DOWN]);
    monitor.answered();
    for (const source of ['/a', '/b', '/c']) monitor.failed(source, 'transport');
    const settled = monitor.waitForService(run.signal).catch((error: unknown) => error);
    await time.until(2_000);
    run.abort(new Error('deadline'));
    await time.until(60_000);
    expect(probes).toEqual([1_000]);
    expect(await settled).toEqual(new Error('deadline'));
  });

  it('waits out a Retry-After given to everyone before the first probe', async () => {
    const { time, events, probes, monitor } = setUp([]);
    monitor.answered();
    monitor.failed('/a', 'throttle', 12_000);
    monitor.failed('/b', 'throttle', 12_000);
    monitor.failed('/c', 'throttle', 12_000);
    await time.until(20_000);
    expect(probes).toEqual([12_000]);
    expect(events[0]).toMatchObject({ state: 'started', reason: 'throttled', nextTryAt: 12_000 });
    expect(events.at(-1)).toMatchObject({ state: 'back', durationMs: 12_000 });
  });

  it('a resource waiting out its own backoff is woken when an outage begins', async () => {
    const { time, monitor } = setUp([]);
    monitor.answered();
    monitor.failed('/a', 'transport');
    const backoff = monitor.backoff(5_000, new AbortController().signal);
    monitor.failed('/b', 'transport');
    monitor.failed('/c', 'transport');
    await expect(backoff).resolves.toBe(true);
    await time.until(1_000);
    // And one that ends normally says so.
    const plain = monitor.backoff(100, new AbortController().signal);
    await time.until(1_200);
    await expect(plain).resolves.toBe(false);
  });

  it('failures all of one resource ask the service something else: an answer means no outage', async () => {
    const { time, events, probes, monitor } = setUp([{ back: true }]);
    monitor.answered();
    for (let i = 0; i < 3; i++) monitor.failed('/bad', 'gateway');
    await time.until(100);
    expect(probes).toEqual([0]);
    expect(monitor.paused).toBe(false);
    expect(events).toEqual([]);
  });

  it('... and a failure of that probe too is an outage', async () => {
    const { time, events, monitor } = setUp([DOWN]);
    monitor.answered();
    for (let i = 0; i < 3; i++) monitor.failed('/bad', 'transport');
    await time.until(0);
    expect(monitor.paused).toBe(true);
    expect(events[0]).toMatchObject({ state: 'started' });
  });

  it('an answer to a request in flight ends the pause at once, unconfirmed', async () => {
    const { time, events, monitor } = setUp([]);
    monitor.answered();
    for (const source of ['/a', '/b', '/c']) monitor.failed(source, 'transport');
    const waiting = monitor.waitForService(new AbortController().signal);
    await time.until(500);
    monitor.answered();
    await expect(waiting).resolves.toBe(false);
    expect(events.map((event) => event.state)).toEqual(['started', 'back']);
  });
});
