import { describe, expect, it } from 'vitest';
import { jsonNumber, jsonString } from '../../src/core/json-text.js';
import { entryLine } from '../../src/manifest/archive-model.js';
import type { StoredFile } from '../../src/storage/stored-file.js';

// Strings a server could send in a header or an id could hold: each must come out exactly as
// JSON.stringify writes it, escapes and all, or a manifest line would differ from the document.
const STRINGS = [
  '',
  'prototypes/12/r3/pages/007.json',
  'application/json; charset=utf-8',
  'Mon, 23 Nov 2026 10:58:37 GMT',
  'say "hi"',
  'back\\slash',
  'tab\there',
  'line\nbreak',
  '\u0000\u001f\u007f',
  'café ☕',
  'astral 😀',
  'lone \ud800 surrogate',
  'lone \udc00 low',
  '</script>',
  " ~!#$%&'()*+,-./:;<=>?@[]^_`{|}",
];

describe('JSON text joined from pieces', () => {
  it.each(STRINGS)('writes %j as JSON.stringify does', (value) => {
    expect(jsonString(value)).toBe(JSON.stringify(value));
    expect(JSON.parse(jsonString(value))).toBe(value);
  });

  it('writes null, and numbers as JSON.stringify does', () => {
    expect(jsonString(null)).toBe('null');
    for (const value of [0, 7, 123456789012, -3, 1.5, 1e21, Number.NaN, Number.POSITIVE_INFINITY, null]) {
      expect(jsonNumber(value)).toBe(JSON.stringify(value));
    }
  });

  it('files an entry line equal to the JSON of its manifest entry and offset', () => {
    for (const contentType of STRINGS) {
      const base = {
        path: 'prototypes/1/r2/pages/3.png',
        source: '/rabbit/api/prototypes/1/pages/3.png',
        sha256: 'ab'.repeat(32),
        size: 4096,
        contentType,
        file: '/work/x',
      };
      const cases: StoredFile[] = [
        { ...base, lastModified: null },
        { ...base, lastModified: contentType, offset: 123456 },
        { ...base, lastModified: 'Tue, 01 Dec 2026 00:00:00 GMT', generatedFrom: contentType, offset: 0 },
      ];
      for (const file of cases) {
        const entry = {
          path: file.path,
          source: file.source,
          sha256: file.sha256,
          size: file.size,
          contentType: file.contentType,
          lastModified: file.lastModified,
          ...(file.generatedFrom === undefined ? {} : { generatedFrom: file.generatedFrom }),
          ...(file.offset === undefined ? {} : { offset: file.offset }),
        };
        expect(entryLine(file)).toBe(JSON.stringify(entry));
      }
    }
  });
});
