import { describe, expect, it, vi } from 'vitest';
import { redactSecrets } from '../../src/core/redact.js';
import { KEY_MARKER, SecretMarker } from '../../src/core/secret-marker.js';
import { replaceIn } from './replace-in.js';

const KEY = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
/** A key whose runs hold `+` and `/`: its base64 and base64url differ at every alignment (a hex key's never do). */
const PUNCT_KEY = 'k?y~a1b2c3d4e5f6?0718293a4b5c6d7e8f9~??>';
const OTHER = 'Zy9-Qx8_Wv7.Ut6~Sr5!Pq4';
type Alphabet = 'base64' | 'base64url';
const ALPHABETS: Alphabet[] = ['base64', 'base64url'];
const CHARS: Record<Alphabet, RegExp> = { base64: /^[A-Za-z0-9+/]*=*$/, base64url: /^[A-Za-z0-9_-]*$/ };

/**
 * The run of base64 characters that depend only on the key's bytes when the key starts `alignment`
 * bytes into a group of three: what no replacement may leave in a body.
 */
function middleRun(key: string, alignment: number, alphabet: Alphabet): string {
  const encoded = Buffer.concat([Buffer.alloc(alignment), Buffer.from(key)]).toString(alphabet);
  return encoded.slice(Math.ceil((8 * alignment) / 6), Math.floor((8 * (alignment + key.length)) / 6));
}

/** The key, and every middle run of it, looked for in `text` (decoded base64 or the body itself). */
function keyIn(text: string, key: string): string[] {
  const found = text.includes(key) ? ['as is'] : [];
  for (const alphabet of ALPHABETS)
    for (let a = 0; a < 3; a++) if (text.includes(middleRun(key, a, alphabet))) found.push(`${alphabet} ${a}`);
  return found;
}

/** A text holding `key` after `alignment` bytes (mod 3), and around it what a decoder must get back unchanged. */
const payload = (key: string, alignment: number): { head: string; tail: string; text: string } => {
  const head = `${'x'.repeat(alignment)}{"token":"`.padStart(12 + alignment, '#');
  const tail = '","scope":"all"}';
  return { head, tail, text: `${head}${key}${tail}` };
};

/** A page carrying `encoded` in a data: URI, and the base64 read back out of one. */
const page = (encoded: string): string => `<p>hi</p><img src="data:application/json;base64,${encoded}" alt="">`;
const dataOf = (html: string): string => /base64,([^"]*)"/.exec(html)?.[1] ?? '';

/** Cut nowhere, at each single place, and between every two bytes. */
function cutsOf(length: number): number[][] {
  const single = Array.from({ length: length + 1 }, (_, i) => [i]);
  return [[], ...single, Array.from({ length: length - 1 }, (_, i) => i + 1)];
}

/**
 * What a decoder reads out of the replaced base64: the text around the key exactly as it was, and
 * in the key's place as many bytes, none of the key's, the marker among them: the marker repeated
 * to the key's length, every bit of it (the characters either side of a run hold a few bits).
 */
function expectKeyGone(encoded: string, alphabet: Alphabet, original: string, key: string): void {
  expect(encoded).toMatch(CHARS[alphabet]);
  expect(encoded.length).toBe(Buffer.from(original).toString(alphabet).length);
  const decoded = Buffer.from(encoded, alphabet).toString('latin1');
  expect(keyIn(decoded, key)).toEqual([]);
  expect(keyIn(encoded, key)).toEqual([]);
  const at = original.indexOf(key);
  expect(decoded.length).toBe(original.length);
  expect(decoded.slice(0, at)).toBe(original.slice(0, at));
  expect(decoded.slice(at + key.length)).toBe(original.slice(at + key.length));
  expect(decoded.slice(at, at + key.length)).toContain(KEY_MARKER);
  expect(decoded.slice(at, at + key.length)).toBe(KEY_MARKER.repeat(3).slice(-key.length));
}

describe('SecretMarker: the key in base64 and base64url, at each alignment', () => {
  for (const [name, key] of [
    ['hex key', KEY],
    ['punctuation key', PUNCT_KEY],
  ] as const) {
    for (const alphabet of ALPHABETS) {
      for (let a = 0; a < 3; a++) {
        it(`${name}, ${alphabet}, the key ${a} bytes into a group: replaced however the body is cut`, () => {
          const scan = SecretMarker.of([key]) as SecretMarker;
          const { text } = payload(key, a);
          const encoded = Buffer.from(text).toString(alphabet);
          const body = Buffer.from(page(encoded));
          // The body holds the run of this alignment and alphabet (a hex key's two alphabets agree).
          const held = keyIn(body.toString('latin1'), key);
          expect(held).toContain(`${alphabet} ${a}`);
          expect(held).toEqual(key === KEY ? [`base64 ${a}`, `base64url ${a}`] : [`${alphabet} ${a}`]);
          for (const cuts of cutsOf(body.length)) {
            const { out, count } = replaceIn(scan, body, cuts);
            expect(count, `cut at ${cuts.join(',')}`).toBe(1);
            const html = out.toString('latin1');
            expect(html.replace(dataOf(html), '')).toBe(page(''));
            expectKeyGone(dataOf(html), alphabet, text, key);
          }
        });
      }
    }
  }

  it.each(ALPHABETS)('%s in text (redactSecrets): an error message that quotes it', (alphabet) => {
    for (const key of [KEY, PUNCT_KEY]) {
      for (let a = 0; a < 3; a++) {
        const { text } = payload(key, a);
        const encoded = Buffer.from(text).toString(alphabet);
        const message = `HTTP 400: bad token ${encoded} (see docs)`;
        const redacted = redactSecrets(message, [key]);
        const kept = /bad token (\S*) \(see docs\)$/.exec(redacted)?.[1] ?? '';
        expectKeyGone(kept, alphabet, text, key);
        expect((SecretMarker.of([key]) as SecretMarker).redact(message).count).toBe(1);
      }
    }
  });

  it.each([
    ['the key alone', [KEY]],
    ['the key twice in a row', [KEY, KEY]],
    ['two keys with a byte between', [KEY, '.', OTHER]],
    ['two keys in a row', [OTHER, KEY]],
  ])('%s, as the whole of what is encoded, padding and all', (_name, pieces) => {
    const twoKeys = SecretMarker.of([KEY, OTHER]) as SecretMarker;
    const text = pieces.join('');
    // The text with each key's bytes as `*`: what the decoded replacement must equal the same way.
    const masked = (decoded: string): string => {
      let at = 0;
      return pieces
        .map((piece) => ((at += piece.length), piece.length > 1 ? '*'.repeat(piece.length) : decoded[at - 1]))
        .join('');
    };
    for (const alphabet of ALPHABETS) {
      const encoded = Buffer.from(text).toString(alphabet);
      const { out, count } = replaceIn(twoKeys, Buffer.from(`"${encoded}"`), [7]);
      expect(count).toBe(pieces.filter((piece) => piece.length > 1).length);
      const kept = out.toString('latin1').slice(1, -1);
      expect(kept).toMatch(CHARS[alphabet]);
      const decoded = Buffer.from(kept, alphabet).toString('latin1');
      expect([...keyIn(decoded, KEY), ...keyIn(decoded, OTHER), ...keyIn(kept, KEY), ...keyIn(kept, OTHER)]).toEqual(
        [],
      );
      expect(decoded).toContain(KEY_MARKER);
      // What lies between two keys is left as it was.
      expect(masked(decoded)).toBe(masked(text));
    }
  });

  it('in UTF-16 text, either byte order: replaced in the same byte order', () => {
    for (const bigEndian of [false, true]) {
      for (const alphabet of ALPHABETS) {
        for (const [a, key] of [0, 1, 2].flatMap((a) => [KEY, PUNCT_KEY].map((key) => [a, key] as const))) {
          const { text } = payload(key, a);
          const utf16 = (html: string): Buffer => {
            const le = Buffer.from(html, 'utf16le');
            return bigEndian ? le.swap16() : le;
          };
          const body = utf16(page(Buffer.from(text).toString(alphabet)));
          for (const cut of [0, 1, 31, 32, 33, 100, 101, body.length - 40, body.length - 41]) {
            const { out, count } = replaceIn(SecretMarker.of([key]) as SecretMarker, body, [cut]);
            expect(count, `cut at ${cut}`).toBe(1);
            const html = (bigEndian ? Buffer.from(out).swap16() : out).toString('utf16le');
            expect(html.replace(dataOf(html), '')).toBe(page(''));
            expectKeyGone(dataOf(html), alphabet, text, key);
          }
        }
      }
    }
  });
});

describe("SecretMarker: the base64 of the key's UTF-16 text (.NET, PowerShell)", () => {
  for (const bigEndian of [false, true]) {
    for (const alphabet of ALPHABETS) {
      it(`${bigEndian ? 'big' : 'little'}-endian, ${alphabet}, the key at each alignment: replaced however the body is cut`, () => {
        const marker = SecretMarker.of([KEY, PUNCT_KEY]) as SecretMarker;
        const utf16 = (text: string): Buffer => {
          const le = Buffer.from(text, 'utf16le');
          return bigEndian ? le.swap16() : le;
        };
        // 0, 1 and 2 characters before the key: its bytes start 0, 2 and 4 bytes in, each alignment once.
        for (const [head, key] of ['', '#', '##'].flatMap((head) =>
          [KEY, PUNCT_KEY].map((key) => [head, key] as const),
        )) {
          const text = `${head}{"token":"${key}","scope":"all"}`;
          const body = Buffer.from(page(utf16(text).toString(alphabet)));
          for (const cuts of cutsOf(body.length)) {
            const { out, count } = replaceIn(marker, body, cuts);
            expect(count, `cut at ${cuts.join(',')}`).toBe(1);
            const html = out.toString('latin1');
            expect(html.replace(dataOf(html), '')).toBe(page(''));
            expect(dataOf(html)).toMatch(CHARS[alphabet]);
            const decoded = Buffer.from(dataOf(html), alphabet);
            const read = (bigEndian ? Buffer.from(decoded).swap16() : decoded).toString('utf16le');
            expect(read).toBe(text.replace(key, KEY_MARKER.repeat(3).slice(-key.length)));
          }
        }
      });
    }
  }
});

describe('SecretMarker: base64 that is not of a key is left byte for byte', () => {
  const marker = SecretMarker.of([KEY]) as SecretMarker;

  it.each([
    ['the key with one character wrong', `${KEY.slice(0, 20)}X${KEY.slice(21)}`],
    ['the key less its last eight characters', KEY.slice(0, -8)],
    ['no key at all', 'just some text, base64 encoded as a data: URI would carry it'],
  ])('%s', (_name, text) => {
    for (const alphabet of ALPHABETS) {
      const body = Buffer.from(page(Buffer.from(text).toString(alphabet)));
      for (const cuts of cutsOf(body.length)) expect(replaceIn(marker, body, cuts)).toEqual({ out: body, count: 0 });
    }
  });

  it('a large body of random base64, and random bytes, cut anywhere', () => {
    let state = 7;
    const next = (): number => (state = (state * 1103515245 + 12345) % 2 ** 31);
    const random = Buffer.from(Array.from({ length: 300_000 }, () => next() & 0xff));
    for (const body of [Buffer.from(random.toString('base64')), Buffer.from(random.toString('base64url')), random]) {
      const cuts: number[] = [];
      for (let at = next() % 5000; at < body.length; at += 1 + (next() % 5000)) cuts.push(at);
      const { out, count } = replaceIn(marker, body, cuts);
      expect(count).toBe(0);
      expect(out.equals(body)).toBe(true);
    }
  });

  it('hands a chunk of base64 without a key on as its own bytes (no copy)', () => {
    const chunk = Buffer.from(Buffer.from('a page of text to be encoded, with no key at all').toString('base64'));
    const out = marker.replacer().push(chunk);
    // All of it, or all but a last character that may stand before a run (held back for the next chunk).
    expect(out.buffer).toBe(chunk.buffer);
    expect(out.byteOffset).toBe(chunk.byteOffset);
    expect(out.length).toBeGreaterThanOrEqual(chunk.length - 1);
  });

  it('a key whose every base64 run is shorter than eight characters is not looked for in base64', () => {
    const short = SecretMarker.of(['k3y!x']) as SecretMarker;
    const body = Buffer.from(page(Buffer.from('{"token":"k3y!x"}').toString('base64')));
    expect(replaceIn(short, body, [])).toEqual({ out: body, count: 0 });
  });
});

describe('SecretMarker: base64 keys among random bytes, however cut', () => {
  it.each([1, 2, 3])('seed %i: every run found, every other byte as it was', (seed) => {
    let state = seed;
    const next = (): number => (state = (state * 1103515245 + 12345) % 2 ** 31);
    const marker = SecretMarker.of([KEY, OTHER]) as SecretMarker;
    const pieces: Buffer[] = [];
    const texts: string[] = [];
    for (let i = 0; i < 30; i++) {
      const key = i % 2 === 0 ? KEY : OTHER;
      const text = `${'.'.repeat(next() % 7)}${key}${'!'.repeat(next() % 5)}`;
      const alphabet = ALPHABETS[next() % 2] as Alphabet;
      texts.push(text);
      pieces.push(Buffer.from(Array.from({ length: next() % 3000 }, () => next() & 0xff)), Buffer.from('\n'));
      pieces.push(Buffer.from(`${alphabet}:${Buffer.from(text).toString(alphabet)}\n`));
    }
    const body = Buffer.concat(pieces);
    const cuts: number[] = [];
    for (let at = next() % 4000; at < body.length; at += 1 + (next() % 4000)) cuts.push(at);
    const { out, count } = replaceIn(marker, body, cuts);
    expect(count).toBe(30);
    expect(out.length).toBe(body.length);
    const runs = [...out.toString('latin1').matchAll(/\n(base64|base64url):([A-Za-z0-9+/_=-]+)\n/g)];
    expect(runs.map((run) => Buffer.from(run[2] as string, run[1] as Alphabet).length)).toEqual(
      texts.map((text) => text.length),
    );
    for (const [i, run] of runs.entries()) {
      const decoded = Buffer.from(run[2] as string, run[1] as Alphabet).toString('latin1');
      const key = i % 2 === 0 ? KEY : OTHER;
      expect([...keyIn(decoded, key), ...keyIn(run[2] as string, key)]).toEqual([]);
      expect(decoded.replace(/^\.*/, '').replace(/!*$/, '').length).toBe(key.length);
    }
    expect(keyIn(out.toString('latin1'), KEY)).toEqual([]);
    expect(keyIn(out.toString('latin1'), OTHER)).toEqual([]);
  });

  it('holds back no more than a window, however the body is cut', () => {
    const marker = SecretMarker.of([KEY]) as SecretMarker;
    const start = middleRun(KEY, 0, 'base64').slice(0, -1);
    const body = Buffer.from(`${'QUJD'.repeat(3000)}${start}`);
    const replacer = marker.replacer();
    let heldMost = 0;
    let passed = 0;
    for (let i = 0; i < body.length; i += 7) {
      passed += replacer.push(body.subarray(i, i + 7)).length;
      heldMost = Math.max(heldMost, Math.min(i + 7, body.length) - passed);
    }
    passed += replacer.end().length;
    expect(passed).toBe(body.length);
    expect(heldMost).toBeGreaterThanOrEqual(start.length);
    expect(heldMost).toBeLessThanOrEqual(marker.window);
  });
});

describe('SecretMarker: base64 keys in a body that comes in pieces, small and large', () => {
  /** A body of text, random bytes and the keys' runs in every form (both alphabets, UTF-16 either way). */
  function bodyOf(seed: number): { body: Buffer; keys: number } {
    let state = seed;
    const next = (): number => (state = (state * 1103515245 + 12345) % 2 ** 31);
    const parts: Buffer[] = [];
    let keys = 0;
    for (let i = 0; i < 40; i++) {
      const text = `${'.'.repeat(next() % 5)}${[KEY, PUNCT_KEY][next() % 2]}${'!'.repeat(next() % 4)}`;
      const encoded = Buffer.from(text).toString(ALPHABETS[next() % 2] as Alphabet);
      const wide = next() % 3;
      const utf16 = Buffer.from(encoded, 'utf16le');
      parts.push(wide === 0 ? Buffer.from(encoded) : wide === 1 ? utf16 : utf16.swap16());
      parts.push(Buffer.from(Array.from({ length: next() % 700 }, () => (next() % 2 === 0 ? next() & 0xff : 0x5a))));
      keys++;
    }
    return { body: Buffer.concat(parts), keys };
  }

  it.each([1, 2, 3])('seed %i: the same bytes out whether it comes whole, a few bytes at a time, or both', (seed) => {
    const marker = SecretMarker.of([KEY, PUNCT_KEY]) as SecretMarker;
    const { body, keys } = bodyOf(seed);
    const whole = replaceIn(marker, body, []);
    expect(whole.count).toBe(keys);
    let state = seed;
    const next = (): number => (state = (state * 1103515245 + 12345) % 2 ** 31);
    // Pieces of 1 to 40 bytes (read byte by byte), then pieces that are now a few bytes, now a few kilobytes.
    for (const most of [[40], [40, 3000]]) {
      const cuts: number[] = [];
      for (let at = 0, k = 0; at < body.length; k++)
        cuts.push((at += 1 + (next() % (most[k % most.length] as number))));
      expect(replaceIn(marker, body, cuts.slice(0, -1))).toEqual(whole);
    }
  });

  it('a run cut anywhere between a large piece and a small one, either way round', () => {
    const marker = SecretMarker.of([KEY]) as SecretMarker;
    const { text } = payload(KEY, 1);
    const encoded = Buffer.from(text).toString('base64');
    const pad = 'x'.repeat(600);
    for (const body of [Buffer.from(pad + page(encoded)), Buffer.from(page(encoded) + pad)]) {
      const from = body.indexOf(encoded) - 3;
      for (let cut = from; cut < from + encoded.length + 6; cut++) {
        const { out, count } = replaceIn(marker, body, [cut]);
        expect(count, `cut at ${cut}`).toBe(1);
        expectKeyGone(dataOf(out.toString('latin1')), 'base64', text, KEY);
      }
    }
  });

  it('a body that begins with the key, however it is cut', () => {
    const marker = SecretMarker.of([KEY]) as SecretMarker;
    for (const head of ['', '#', '##']) {
      const text = `${head}${KEY}${'!'.repeat(12)}`;
      for (const alphabet of ALPHABETS) {
        const body = Buffer.from(Buffer.from(text).toString(alphabet));
        for (const cuts of cutsOf(body.length)) {
          const { out, count } = replaceIn(marker, body, cuts);
          expect(count, `cut at ${cuts.join(',')}`).toBe(1);
          expectKeyGone(out.toString('latin1'), alphabet, text, KEY);
        }
      }
    }
  });

  it("a piece costs no search of what is held back: a run's first byte a byte at a time", () => {
    const keys = (SecretMarker.of([KEY]) as SecretMarker).base64 as NonNullable<SecretMarker['base64']>;
    const first = middleRun(KEY, 0, 'base64')[0] as string;
    const replacer = keys.replacer();
    const byte = Buffer.from(first);
    // Native searches and comparisons are what a piece costs beyond its own bytes: counted, not timed.
    const compare = vi.spyOn(Buffer.prototype, 'compare');
    const indexOf = vi.spyOn(Buffer.prototype, 'indexOf');
    let passed = 0;
    let calls = 0;
    try {
      for (let i = 0; i < 4096; i++) passed += replacer.push(byte).length;
      passed += replacer.end().length;
      calls = compare.mock.calls.length + indexOf.mock.calls.length;
    } finally {
      compare.mockRestore();
      indexOf.mockRestore();
    }
    expect(passed).toBe(4096);
    expect(calls).toBeLessThan(64);
  });
});
