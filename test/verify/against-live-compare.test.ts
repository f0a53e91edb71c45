import { describe, expect, it } from 'vitest';
import { compareDigests, compareJson, redactLiveBody } from '../../src/live-check/compare-bodies.js';
import { KEY_MARKER, SecretMarker } from '../../src/core/secret-marker.js';
import { liveResourceOf } from '../../src/live-check/resource-kinds.js';
import { parseSampleSize } from '../../src/live-check/sample-plan.js';
import { isRabbitError } from '../../src/core/errors.js';

// issue 38: what "matches" means for a JSON body, a rendering, and which resource an entry is.

const BOM = '\uFEFF';

describe('compareJson', () => {
  it.each([
    { label: 'the same bytes', archived: '{"a":1}', live: '{"a":1}', want: 'bytes' },
    { label: 'members in another order', archived: '{"a":1,"b":[1,2]}', live: '{"b":[1,2],"a":1}', want: 'json' },
    { label: 'other whitespace', archived: '{"a":1}', live: '{ "a" : 1 }\n', want: 'json' },
    { label: 'a byte-order mark on one side', archived: `${BOM}{"a":1}`, live: '{"a":1}', want: 'json' },
    { label: 'a changed value', archived: '{"a":1}', live: '{"a":2}', want: 'differs' },
    { label: 'an array in another order', archived: '[1,2]', live: '[2,1]', want: 'differs' },
    { label: 'a member more', archived: '{"a":1}', live: '{"a":1,"b":null}', want: 'differs' },
    {
      label: 'ids past 2^53 that JSON.parse reads as one',
      archived: '{"id":9007199254740993}',
      live: '{"id":9007199254740992}',
      want: 'differs',
    },
    {
      label: 'a __proto__ member that differs',
      archived: '{"__proto__":{"x":1}}',
      live: '{"__proto__":{"x":2}}',
      want: 'differs',
    },
    { label: 'a body that is not JSON', archived: '{"a":1}', live: '{"a":1', want: 'differs' },
  ])('$label: $want', ({ archived, live, want }) => {
    expect(compareJson(Buffer.from(archived), Buffer.from(live))).toBe(want);
  });

  it('renderings match by digest and size only', () => {
    const a = { sha256: 'a'.repeat(64), size: 10 };
    expect(compareDigests(a, { ...a })).toBe('bytes');
    expect(compareDigests(a, { ...a, size: 11 })).toBe('differs');
    expect(compareDigests(a, { ...a, sha256: 'b'.repeat(64) })).toBe('differs');
  });
});

describe('liveResourceOf', () => {
  it.each([
    ['/rabbit/api/prototypes.json', { type: 'list', member: 'prototype' }],
    [
      '/rabbit/api/prototypes/3.json',
      { type: 'resource', kind: 'prototype', prototype: '3', item: 'prototype', id: '3', body: 'json' },
    ],
    ['/rabbit/api/prototypes/3/pages.json', { type: 'list', member: 'page', prototype: '3' }],
    ['/rabbit/api/prototypes/3/discussions.json', { type: 'list', member: 'discussion', prototype: '3' }],
    [
      '/rabbit/api/prototypes/3/layers/layer1/elements.json',
      { type: 'list', member: 'element', prototype: '3', parent: 'layer1' },
    ],
    [
      '/rabbit/api/prototypes/3/pages/page1/discussions.json',
      { type: 'list', member: 'discussion', prototype: '3', parent: 'page1' },
    ],
    [
      '/rabbit/api/prototypes/3/pages/page1/elements/element4.json',
      {
        type: 'resource',
        kind: 'element',
        prototype: '3',
        item: 'element',
        id: 'element4',
        parent: 'page1',
        body: 'json',
      },
    ],
    [
      '/rabbit/api/prototypes/3/pages/page1.png',
      { type: 'resource', kind: 'rendering', prototype: '3', item: 'page', id: 'page1', format: 'png', body: 'png' },
    ],
    [
      '/rabbit/api/prototypes/3/pages/page1.xhtml?mode=plain',
      {
        type: 'resource',
        kind: 'rendering',
        prototype: '3',
        item: 'page',
        id: 'page1',
        format: 'xhtml-plain',
        body: 'html',
      },
    ],
    [
      '/rabbit/api/prototypes/3/discussions/9.json',
      { type: 'resource', kind: 'discussion', prototype: '3', item: 'discussion', id: '9', body: 'json' },
    ],
    ['/static/rabbit.css', undefined],
    ['generated', undefined],
    ['/rabbit/api/prototypes/3/../4.json', undefined],
  ])('%s', (source, want) => {
    expect(liveResourceOf(source)).toEqual(want);
  });
});

describe('parseSampleSize', () => {
  it.each([
    ['5%', { percent: 5 }],
    ['100%', { percent: 100 }],
    ['0.5%', { percent: 0.5 }],
    ['200', { count: 200 }],
  ])('%s', (text, want) => {
    expect(parseSampleSize(text)).toEqual(want);
  });

  it.each(['0%', '101%', '0', '-3', 'half', '5 %%'])('refuses %s as usage', (text) => {
    let caught: unknown;
    try {
      parseSampleSize(text);
    } catch (error) {
      caught = error;
    }
    expect(isRabbitError(caught, 'USAGE')).toBe(true);
  });
});

describe('a live body is compared as the export would have stored it', () => {
  const key = 'k3y-Live-0123456789';
  const marker = SecretMarker.of([key]);

  it("replaces the run's keys, in any encoding the export replaces them in, before comparing", () => {
    const live = Buffer.from(
      `<a href="/rabbit/api/p.png?api_key=${key}">x</a><b>${encodeURIComponent(key).replace('-', '%2D')}</b>`,
    );
    const stored = redactLiveBody(live, marker).toString('utf8');
    expect(stored).toBe(`<a href="/rabbit/api/p.png?api_key=${KEY_MARKER}">x</a><b>${KEY_MARKER}</b>`);
  });

  it('gives a body without a key back as it is', () => {
    const live = Buffer.from('{"id":3}');
    expect(redactLiveBody(live, marker)).toBe(live);
    expect(redactLiveBody(live, undefined)).toBe(live);
  });
});
