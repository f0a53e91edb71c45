import { describe, expect, it } from 'vitest';
import { KEY_MARKER, SecretMarker } from '../../src/core/secret-marker.js';
import { replaceIn as replaceBytes } from './replace-in.js';

const KEY = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
const PUNCT_KEY = 'k&e<y"/+%\\_-~x';

const code = (c: string): number => c.charCodeAt(0);
const each = (key: string, f: (c: string) => string): string => [...key].map(f).join('');
const hex = (c: string): string => code(c).toString(16);

/** The encodings a key may reach a body in, each applied to every character (and some mixed). */
function encodings(key: string): [string, string][] {
  return [
    ['as is', key],
    ['percent, upper hex', each(key, (c) => `%${hex(c).toUpperCase().padStart(2, '0')}`)],
    ['percent, lower hex', each(key, (c) => `%${hex(c).padStart(2, '0')}`)],
    ['percent %u', each(key, (c) => `%u${hex(c).padStart(4, '0')}`)],
    ['JSON \\u, lower', each(key, (c) => `\\u${hex(c).padStart(4, '0')}`)],
    ['JSON \\u, upper', each(key, (c) => `\\u${hex(c).toUpperCase().padStart(4, '0')}`)],
    ['JS \\x', each(key, (c) => `\\x${hex(c).padStart(2, '0')}`)],
    ['JS \\u{}', each(key, (c) => `\\u{${hex(c)}}`)],
    ['CSS hex escape', each(key, (c) => `\\${hex(c)} `)],
    ['CSS six-digit escape', each(key, (c) => `\\${hex(c).padStart(6, '0')}`)],
    ['HTML decimal', each(key, (c) => `&#${code(c)};`)],
    ['HTML decimal, leading zeros', each(key, (c) => `&#000${code(c)};`)],
    ['HTML hex', each(key, (c) => `&#x${hex(c)};`)],
    ['HTML hex, upper X', each(key, (c) => `&#X${hex(c).toUpperCase()};`)],
    ['only the punctuation escaped', each(key, (c) => (/[a-z0-9]/i.test(c) ? c : `%${hex(c)}`))],
    ['every other character escaped', each(key, (c) => (code(c) % 2 ? `&#${code(c)};` : c))],
  ];
}

/** The replacer fed `text` (as latin1 bytes) cut at the given places: its output and count. */
function replaceIn(marker: SecretMarker, text: string, cuts: number[]): { out: string; count: number } {
  const { out, count } = replaceBytes(marker, Buffer.from(text, 'latin1'), cuts);
  return { out: out.toString('latin1'), count };
}

describe('SecretMarker: the key in every encoding, split at every chunk boundary', () => {
  for (const key of [KEY, PUNCT_KEY]) {
    const marker = SecretMarker.of([key]) as SecretMarker;
    it.each(encodings(key))(`${key === KEY ? 'hex key' : 'punctuation key'}: %s`, (_name, encoded) => {
      const text = `<a href="/x?api_key=${encoded}">${encoded}</a>`;
      const expected = `<a href="/x?api_key=${KEY_MARKER}">${KEY_MARKER}</a>`;
      for (let cut = 0; cut <= text.length; cut++)
        expect(replaceIn(marker, text, [cut])).toEqual({ out: expected, count: 2 });
      // One byte a chunk: every boundary at once.
      const everyByte = Array.from({ length: text.length - 1 }, (_, i) => i + 1);
      expect(replaceIn(marker, text, everyByte)).toEqual({ out: expected, count: 2 });
    });
  }

  it.each([
    ['&amp;', 'k&amp;e<y"/+%\\_-~x'],
    ['legacy &amp without semicolon', 'k&ampe&lt;y&quot;&sol;&plus;&percnt;&bsol;&lowbar;-~x'],
    ['named references', 'k&AMP;e&LT;y&QUOT;&sol;&plus;%\\_-~x'],
    ['JSON \\/ and \\\\ and \\"', 'k&e<y\\"\\/+%\\\\_-~x'],
  ])('punctuation key with %s', (_name, encoded) => {
    const marker = SecretMarker.of([PUNCT_KEY]) as SecretMarker;
    const text = `[${encoded}]`;
    for (let cut = 0; cut <= text.length; cut++)
      expect(replaceIn(marker, text, [cut])).toEqual({ out: `[${KEY_MARKER}]`, count: 1 });
  });
});

describe('SecretMarker: what is not a key is left byte for byte', () => {
  const marker = SecretMarker.of([KEY]) as SecretMarker;
  it.each([
    ['no key at all', 'plain text & more % and \\ escapes \\u0041 &#65; %41'],
    ['the key less its last character', KEY.slice(0, -1)],
    ['the key with one character wrong', `${KEY.slice(0, 20)}X${KEY.slice(21)}`],
    ['an escape of the wrong character', `${KEY.slice(0, 10)}%41${KEY.slice(11)}`],
    ['a reference with a digit too many', `${KEY.slice(0, 1)}&#x0000000000000031${KEY.slice(2)}`],
    ['empty', ''],
  ])('%s', (_name, text) => {
    for (let cut = 0; cut <= text.length; cut++)
      expect(replaceIn(marker, text, [cut])).toEqual({ out: text, count: 0 });
  });

  it('hands a chunk without a key on as the same buffer (no copy)', () => {
    const replacer = marker.replacer();
    const chunk = Buffer.from('nothing to see here, just text.');
    expect(replacer.push(chunk)).toBe(chunk);
  });
});

describe('SecretMarker: overlapping and repeated near-matches', () => {
  it.each([
    ['a key preceded by its own prefix', 'abcabcd', 'abcabcabcd', `abc${KEY_MARKER}`, 1],
    ['a key made of one repeated pattern', 'abababab', 'ababababab', `${KEY_MARKER}ab`, 1],
    ['two keys back to back', 'k3y!', 'k3y!k3y!', `${KEY_MARKER}${KEY_MARKER}`, 2],
    ['a key whose start is its own end', 'aaaa', 'aaaaaaa', `${KEY_MARKER}aaa`, 1],
    ['a near-match, then the key', 'wxyz', 'wxywxyz', `wxy${KEY_MARKER}`, 1],
  ])('%s', (_name, key, text, expected, count) => {
    const marker = SecretMarker.of([key]) as SecretMarker;
    for (let cut = 0; cut <= text.length; cut++)
      for (let second = cut; second <= text.length; second++)
        expect(replaceIn(marker, text, [cut, second])).toEqual({ out: expected, count });
  });

  it('several keys: each is replaced, the longer one whole where one begins the other', () => {
    const marker = SecretMarker.of(['abcd', 'abcdef', 'zyxw']) as SecretMarker;
    expect(marker.redact('1 abcdef 2 abcd 3 zyxw 4 abcde')).toEqual({
      text: `1 ${KEY_MARKER} 2 ${KEY_MARKER} 3 ${KEY_MARKER} 4 ${KEY_MARKER}e`,
      count: 4,
    });
  });

  it('keys shorter than four characters are not looked for', () => {
    expect(SecretMarker.of(['abc'])).toBeUndefined();
    expect(SecretMarker.of([])).toBeUndefined();
  });

  it('holds back no more than a window, however the body is cut', () => {
    const marker = SecretMarker.of([KEY]) as SecretMarker;
    const replacer = marker.replacer();
    let heldMost = 0;
    let passed = 0;
    const body = Buffer.from(`${'%'.repeat(5000)}${'&#'.repeat(5000)}${KEY.slice(0, 39)}`);
    for (let i = 0; i < body.length; i += 7) {
      passed += replacer.push(body.subarray(i, i + 7)).length;
      heldMost = Math.max(heldMost, Math.min(i + 7, body.length) - passed);
    }
    passed += replacer.end().length;
    expect(passed).toBe(body.length);
    expect(heldMost).toBeLessThanOrEqual(marker.window);
  });
});

/** A deterministic generator of 32-bit numbers (mulberry32), so a failing case can be replayed. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** One character written each way a body may write it, for keys written in a mix of them. */
const UNITS: ((c: string) => string)[] = [
  (c) => c,
  (c) => `%${hex(c).toUpperCase().padStart(2, '0')}`,
  (c) => `%u${hex(c).padStart(4, '0')}`,
  (c) => `\\u${hex(c).padStart(4, '0')}`,
  (c) => `\\x${hex(c).padStart(2, '0')}`,
  (c) => `\\u{${hex(c)}}`,
  (c) => `\\${hex(c)} `,
  (c) => `\\${hex(c).padStart(6, '0')}`,
  (c) => `&#${code(c)};`,
  (c) => `&#000${code(c)};`,
  (c) => `&#x${hex(c)};`,
  (c) => `&#X${hex(c).toUpperCase()};`,
];

describe('SecretMarker: keys among random bytes, which the scan mostly passes over unread', () => {
  it.each([
    ['hex key', 1, KEY],
    ['hex key', 2, KEY],
    ['punctuation key', 3, PUNCT_KEY],
    ['short key', 4, 'k3y!'],
  ])('%s, seed %i: every key found, every other byte as it was, however cut', (_name, seed, key) => {
    const next = seeded(seed);
    const marker = SecretMarker.of([key]) as SecretMarker;
    const pieces: Buffer[] = [];
    const expected: Buffer[] = [];
    for (let i = 0; i < 40; i++) {
      // Random filler (what a PNG's compressed data looks like), then the key, each character
      // written its own way.
      const filler = Buffer.from(Array.from({ length: next() % 3000 }, () => next() & 0xff));
      const encoded = each(key, (c) => (UNITS[next() % UNITS.length] as (c: string) => string)(c));
      pieces.push(filler, Buffer.from(encoded, 'latin1'));
      expected.push(filler, Buffer.from(KEY_MARKER));
    }
    const body = Buffer.concat(pieces).toString('latin1');
    const cuts: number[] = [];
    for (let at = next() % 5000; at < body.length; at += 1 + (next() % 5000)) cuts.push(at);
    expect(replaceIn(marker, body, cuts)).toEqual({ out: Buffer.concat(expected).toString('latin1'), count: 40 });
  });
});

describe('SecretMarker: the key in a UTF-16 body', () => {
  const utf16 = (text: string, bigEndian: boolean, bom: boolean): Buffer => {
    const le = Buffer.from(`${bom ? '\ufeff' : ''}${text}`, 'utf16le');
    return bigEndian ? le.swap16() : le;
  };
  const cases = [false, true].flatMap((bigEndian) =>
    [false, true].flatMap((bom) =>
      (['as is', 'percent, upper hex', 'JSON \\u, lower', 'HTML decimal'] as const).map(
        (encoding) =>
          [
            `${bigEndian ? 'big' : 'little'}-endian, ${bom ? 'with' : 'without'} a BOM, ${encoding}`,
            bigEndian,
            bom,
            encoding,
          ] as const,
      ),
    ),
  );

  it.each(cases)(
    '%s: replaced by the marker in the same byte order, however cut',
    (_name, bigEndian, bom, encoding) => {
      const marker = SecretMarker.of([KEY]) as SecretMarker;
      const encoded = (encodings(KEY).find(([name]) => name === encoding) as [string, string])[1];
      const text = (key: string) => `<p title="${key}">Schlüssel ${key} – ok</p>`;
      const body = utf16(text(encoded), bigEndian, bom);
      const expected = utf16(text(KEY_MARKER), bigEndian, bom);
      for (let cut = 0; cut <= body.length; cut += 1) {
        const replacer = marker.replacer();
        const out = Buffer.concat([
          replacer.push(body.subarray(0, cut)),
          replacer.push(body.subarray(cut)),
          replacer.end(),
        ]);
        expect(out.equals(expected), `cut at ${cut}`).toBe(true);
        expect(replacer.count).toBe(2);
      }
    },
  );

  it('leaves UTF-16 text without a key byte for byte, and random bytes with zeros in them', () => {
    const marker = SecretMarker.of([KEY]) as SecretMarker;
    const next = seeded(16);
    const random = Buffer.from(Array.from({ length: 200_000 }, () => (next() % 4 === 0 ? 0 : next() & 0xff)));
    for (const body of [utf16(`${KEY.slice(0, -1)} and ${KEY.slice(1)}`, false, true), random]) {
      const replacer = marker.replacer();
      const out = Buffer.concat([
        replacer.push(body.subarray(0, 777)),
        replacer.push(body.subarray(777)),
        replacer.end(),
      ]);
      expect(out.equals(body)).toBe(true);
      expect(replacer.count).toBe(0);
    }
  });
});
