import { describe, expect, test } from 'vitest';
import type { ElementState, PlanInput } from '../../src/restore/plan.js';
import { planParent } from '../../src/restore/plan.js';
import { checkElementBody, canonicalJson } from '../../src/restore/element-shape.js';

const el = (id: string, attributes: Record<string, unknown>): ElementState => ({ id, attributes });
const A = el('element1', { type: 'button', position: { x: 1, y: 2 } });
const B = el('element2', { type: 'text', text: 'hi', position: { x: 5, y: 5 } });
const C = el('element3', { type: 'image', dimensions: { width: 10, height: 10 } });

interface Row {
  name: string;
  archived: ElementState[];
  live: ElementState[];
  known?: Array<[string, string]>;
  keep?: string[];
  prune?: boolean;
  expect: {
    creates?: string[];
    updates?: Array<[string, string[]]>;
    deletes?: string[];
    unchanged?: string[];
    found?: Record<string, string>;
    strays?: string[];
    extras?: Array<[string, string[]]>;
  };
}

const rows: Row[] = [
  { name: 'identical: nothing to do', archived: [A, B], live: [A, B], expect: { unchanged: ['element1', 'element2'] } },
  {
    name: 'key order does not matter',
    archived: [A],
    live: [el('element1', { position: { y: 2, x: 1 }, type: 'button' })],
    expect: { unchanged: ['element1'] },
  },
  {
    name: 'deleted live: created',
    archived: [A, B, C],
    live: [B],
    expect: { creates: ['element1', 'element3'], unchanged: ['element2'] },
  },
  {
    name: 'moved live: updated with what changed',
    archived: [A, B],
    live: [el('element1', { type: 'button', position: { x: 9, y: 9 } }), B],
    expect: { updates: [['element1', ['position']]], unchanged: ['element2'] },
  },
  {
    name: 'archived attribute missing live: updated',
    archived: [B],
    live: [el('element2', { type: 'text', position: { x: 5, y: 5 } })],
    expect: { updates: [['element2', ['text']]] },
  },
  {
    name: 'added live, no prune: a stray, kept',
    archived: [A],
    live: [A, el('element9', { type: 'x' })],
    expect: { unchanged: ['element1'], strays: ['element9'] },
  },
  {
    name: 'added live, prune: deleted',
    archived: [A],
    live: [A, el('element9', { type: 'x' })],
    prune: true,
    expect: { unchanged: ['element1'], deletes: ['element9'] },
  },
  {
    name: 'restored earlier under a new id: found by content, not created again',
    archived: [A, B],
    live: [B, el('element40', A.attributes)],
    prune: true,
    expect: { unchanged: ['element40', 'element2'], found: { element1: 'element40' } },
  },
  {
    name: 'two identical archived elements, one restored: the other is created',
    archived: [A, el('element5', A.attributes)],
    live: [el('element40', A.attributes)],
    expect: { creates: ['element5'], found: { element1: 'element40' }, unchanged: ['element40'] },
  },
  {
    name: 'journal says where it went, then it was moved: updated under the new id',
    archived: [A],
    live: [el('element40', { type: 'button', position: { x: 7, y: 7 } })],
    known: [['element1', 'element40']],
    expect: { updates: [['element40', ['position']]], found: { element1: 'element40' } },
  },
  {
    name: 'journal points at an id that is gone: created',
    archived: [A],
    live: [],
    known: [['element1', 'element40']],
    expect: { creates: ['element1'] },
  },
  {
    name: 'a live element under another archived id is never taken for a lost one',
    archived: [A, el('element2', A.attributes)],
    live: [el('element2', A.attributes)],
    known: [['element1', 'element2']],
    expect: { creates: ['element1'], unchanged: ['element2'] },
  },
  {
    name: 'live has extra attributes: reported, cannot be removed',
    archived: [A],
    live: [el('element1', { ...A.attributes, color: 'red' })],
    expect: { unchanged: ['element1'], extras: [['element1', ['color']]] },
  },
  {
    name: 'content match tolerates attributes the service added on create',
    archived: [A],
    live: [el('element40', { ...A.attributes, zIndex: 3 })],
    expect: { unchanged: ['element40'], found: { element1: 'element40' }, extras: [['element40', ['zIndex']]] },
  },
  {
    name: 'exact twins are matched before look-alikes',
    archived: [A, el('element7', { ...A.attributes, note: 'n' })],
    live: [el('element40', { ...A.attributes, note: 'n' }), el('element41', A.attributes)],
    expect: { unchanged: ['element41', 'element40'], found: { element1: 'element41', element7: 'element40' } },
  },
  {
    name: 'an element the archive lists but cannot give back is neither deleted nor taken for another',
    archived: [A],
    live: [el('element8', A.attributes)],
    keep: ['element8'],
    prune: true,
    expect: { creates: ['element1'] },
  },
];

describe('planParent', () => {
  test.each(rows)('$name', (row) => {
    const input: PlanInput = { parent: 'page1', archived: row.archived, live: row.live, prune: row.prune ?? false };
    if (row.known) input.known = new Map(row.known);
    if (row.keep) input.keep = new Set(row.keep);
    const plan = planParent(input);
    const ops = (op: string): string[] =>
      plan.writes
        .filter((w) => w.op === op)
        .map((w) => (w.op === 'create' ? w.archivedId : w.op === 'update' ? w.id : w.id));
    expect(ops('create')).toEqual(row.expect.creates ?? []);
    expect(plan.writes.flatMap((w) => (w.op === 'update' ? [[w.id, w.changed]] : []))).toEqual(
      row.expect.updates ?? [],
    );
    expect(ops('delete')).toEqual(row.expect.deletes ?? []);
    expect(plan.unchanged).toEqual(row.expect.unchanged ?? []);
    expect(plan.found).toEqual(row.expect.found ?? {});
    expect(plan.strays).toEqual(row.expect.strays ?? []);
    expect(plan.extraAttributes.map((e) => [e.id, e.names])).toEqual(row.expect.extras ?? []);
  });

  test('creates carry every archived attribute but id; updates every archived attribute', () => {
    const plan = planParent({
      parent: 'layer1',
      archived: [A, B],
      live: [el('element2', { type: 'text' })],
      prune: false,
    });
    expect(plan.writes).toEqual([
      { op: 'create', parent: 'layer1', archivedId: 'element1', attributes: A.attributes },
      {
        op: 'update',
        parent: 'layer1',
        archivedId: 'element2',
        id: 'element2',
        attributes: B.attributes,
        changed: ['text', 'position'],
      },
    ]);
  });
});

describe('checkElementBody', () => {
  test.each([
    ['not an object', [1], /not a JSON object/],
    ['another id', { id: 'element2', type: 'x' }, /id/],
    ['no type', { id: 'element1' }, /type/],
    ['a control character in a name', { id: 'element1', type: 'x', 'a\nb': 1 }, /name/],
    ['a name too long', { id: 'element1', type: 'x', ['n'.repeat(200)]: 1 }, /name/],
    ['__proto__', JSON.parse('{"id":"element1","type":"x","__proto__":{"polluted":1}}') as unknown, /name/],
    ['too deep', { id: 'element1', type: 'x', deep: JSON.parse('['.repeat(40) + ']'.repeat(40)) as unknown }, /deeply/],
    ['too big', { id: 'element1', type: 'x', text: 'x'.repeat(300 * 1024) }, /bytes/],
  ])('refuses %s', (_what, body, problem) => {
    const checked = checkElementBody(body, 'element1');
    expect('problem' in checked && checked.problem).toMatch(problem);
  });

  test('accepts an ordinary element and leaves the id out', () => {
    expect(
      checkElementBody(
        { id: 'element1', type: 'button', position: { x: 1, y: 2 }, custom: [1, { a: null }] },
        'element1',
      ),
    ).toEqual({
      attributes: { type: 'button', position: { x: 1, y: 2 }, custom: [1, { a: null }] },
    });
  });

  test('canonical JSON ignores key order only', () => {
    expect(canonicalJson({ b: 1, a: [2, { d: 1, c: 2 }] })).toBe(canonicalJson({ a: [2, { c: 2, d: 1 }], b: 1 }));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });
});
