import { describe, expect, it } from 'vitest';
import { KeyWatch, type KeyCheck, type KeyRefusal } from '../../src/client/key-refusal.js';
import { OUTAGE_DEFAULTS } from '../../src/client/outage-policy.js';

/** A check the test answers by hand, one at a time, and the hold it is made under. */
function harness(keys = ['k1', 'k2']) {
  const checks: { key: string; answer: (found: KeyCheck) => void }[] = [];
  const sleeps: number[] = [];
  const refused: [KeyRefusal, boolean][] = [];
  let holds = 0;
  let now = 1_000;
  const watch = new KeyWatch({
    keys,
    policy: { ...OUTAGE_DEFAULTS },
    now: () => now,
    // No real waiting: the clock moves by what was asked.
    sleep: (ms) => {
      sleeps.push(ms);
      now += ms;
      return Promise.resolve();
    },
    signal: new AbortController().signal,
    check: (key) => new Promise((resolve) => checks.push({ key, answer: resolve })),
    hold: () => holds++,
    release: () => holds--,
    onRefused: (refusal, everyKey) => refused.push([refusal, everyKey]),
  });
  return { watch, checks, sleeps, refused, holds: () => holds };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('telling a revoked key from a resource it may not read', () => {
  it('answers for refusals together with one check made under a hold, and names the key and its first refused request', async () => {
    const { watch, checks, refused, holds } = harness();
    watch.answered('k1');
    const numbers = [watch.sending(), watch.sending(), watch.sending()];
    const judged = numbers.map((n) => watch.judge('k1', n, 401, `/rabbit/api/r${n}.json`));
    await settle();
    expect(checks).toHaveLength(1);
    expect(holds()).toBe(1);
    checks[0]?.answer({ verdict: 'refused' });
    const refusals = await Promise.all(judged);
    expect(holds()).toBe(0);
    expect(refusals.every((r) => r === refusals[0])).toBe(true);
    expect(refusals[0]).toMatchObject({
      keyNumber: 1,
      request: 1,
      status: 401,
      since: 1_000,
      source: '/rabbit/api/r1.json',
    });
    expect(watch.refusalOf('k1')).toBe(refusals[0]);
    expect(refused).toEqual([[refusals[0], true]]);
    // Later refusals need no check: the key is known refused.
    await watch.judge('k1', watch.sending(), 401, '/x');
    expect(checks).toHaveLength(1);
  });

  it('a key that still reads its list: the refusal is the resource own, and only a request sent after the check needs another', async () => {
    const { watch, checks, refused } = harness();
    watch.answered('k1');
    const before = watch.sending();
    const first = watch.judge('k1', before, 403, '/d1');
    await settle();
    const after = watch.sending();
    checks[0]?.answer({ verdict: 'works' });
    expect(await first).toBeUndefined();
    expect(await watch.judge('k1', before, 403, '/d2')).toBeUndefined();
    expect(checks).toHaveLength(1);
    const later = watch.judge('k1', after, 403, '/d3');
    await settle();
    expect(checks).toHaveLength(2);
    checks[1]?.answer({ verdict: 'works' });
    expect(await later).toBeUndefined();
    expect(refused).toEqual([]);
  });

  it('a key that never read anything is not checked: the list of prototypes reports it', async () => {
    const { watch, checks } = harness();
    expect(await watch.judge('k1', watch.sending(), 401, '/rabbit/api/prototypes.json')).toBeUndefined();
    expect(checks).toHaveLength(0);
  });

  it('a check the service does not answer is made again after the outage delays, then let go at the patience', async () => {
    const { watch, checks, sleeps } = harness();
    watch.answered('k1');
    const judged = watch.judge('k1', watch.sending(), 401, '/p');
    for (let i = 0; i < 3; i++) {
      await settle();
      checks[i]?.answer({ verdict: 'unsure', answer: 'HTTP 502' });
    }
    await settle();
    expect(sleeps).toEqual([1_000, 2_000, 4_000]);
    checks[3]?.answer({ verdict: 'refused' });
    expect(await judged).toMatchObject({ keyNumber: 1 });

    const patient = harness();
    patient.watch.answered('k1');
    const given = patient.watch.judge('k1', patient.watch.sending(), 401, '/p');
    for (let i = 0; ; i++) {
      await settle();
      const check = patient.checks[i];
      if (!check) break;
      check.answer({ verdict: 'unsure', answer: 'no answer' });
    }
    expect(await given).toBeUndefined();
    expect(patient.sleeps.reduce((a, b) => a + b, 0)).toBe(OUTAGE_DEFAULTS.patienceMs);
    expect(patient.holds()).toBe(0);
  });

  it('with two keys the first refused leaves the other going; the second refused is every key', async () => {
    const { watch, checks, refused } = harness();
    watch.answered('k1');
    watch.answered('k2');
    const one = watch.judge('k1', watch.sending(), 401, '/a');
    await settle();
    checks[0]?.answer({ verdict: 'refused' });
    await one;
    const two = watch.judge('k2', watch.sending(), 401, '/b');
    await settle();
    checks[1]?.answer({ verdict: 'refused' });
    await two;
    expect(refused.map(([r, every]) => [r.keyNumber, every])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(watch.refused.map((r) => r.keyNumber)).toEqual([1, 2]);
  });
});
