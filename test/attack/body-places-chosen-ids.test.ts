import { describe, expect, it } from 'vitest';
import { BodyPlaces, placeHash } from '../../src/site/body-places.js';

/** A table of 4,096 entries has 8,192 slots: the slot is the hash's low 13 bits. */
const MASK = (1 << 13) - 1;

/**
 * What a service picking its ids could do offline: among candidate element files, those that
 * land in one slot of a table under a basis of its choosing (it cannot know the table's).
 */
function pileUp(basis: number, candidates: number): string[] {
  const slotOf = (name: string) => placeHash(Buffer.from(name, 'utf8'), basis) & MASK;
  const target = slotOf('pages/page1/elements/element0.json');
  const piled: string[] = [];
  for (let i = 0; i < candidates; i++) {
    const name = `pages/page1/elements/element${i}.json`;
    if (slotOf(name) === target) piled.push(name);
  }
  return piled;
}

/** Bases as tables draw them, but fixed, so the test says the same every run. */
function* bases(count: number): Generator<number> {
  let x = 0x2545f491;
  for (let i = 0; i < count; i++) {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    yield x;
  }
}

describe('body places against ids chosen to collide', () => {
  it('ids that share a slot under one basis scatter under the bases tables draw, as unrelated ids would', () => {
    const piled = pileUp(12345, 600_000);
    expect(piled.length).toBeGreaterThan(50);
    const pairs = (piled.length * (piled.length - 1)) / 2;
    let meetings = 0;
    let tables = 0;
    for (const basis of bases(300)) {
      tables++;
      const bySlot = new Map<number, number>();
      for (const name of piled) {
        const slot = placeHash(Buffer.from(name, 'utf8'), basis) & MASK;
        bySlot.set(slot, (bySlot.get(slot) ?? 0) + 1);
      }
      for (const n of bySlot.values()) meetings += (n * (n - 1)) / 2;
    }
    // Unrelated names meet in one pair of `MASK + 1` per table; FNV-1a alone kept over a hundred times that.
    expect(meetings / tables).toBeLessThan((4 * pairs) / (MASK + 1));
  });

  it('files and finds every one of them in a table', () => {
    const piled = pileUp(12345, 200_000);
    const places = new BodyPlaces();
    for (const [i, name] of piled.entries()) places.set(name, { file: '/spool/pack', offset: i, size: i + 1 });
    expect(places.count).toBe(piled.length);
    expect(piled.map((name) => places.get(name)?.offset)).toEqual(piled.map((_, i) => i));
    expect(places.has('pages/page1/elements/element-1.json')).toBe(false);
  });
});
