import { describe, expect, it } from 'vitest';
import { decodePage } from '../../src/site/decode-page.js';

/** The views are written as UTF-8 whatever the rendering's encoding: its text must come through unchanged. */
describe('decodePage', () => {
  const text = '<p>Grüße – 日本</p>';
  it.each([
    ['UTF-8, no label', Buffer.from(text, 'utf8'), null, text],
    ['UTF-8 by Content-Type', Buffer.from(text, 'utf8'), 'application/xhtml+xml; charset=utf-8', text],
    [
      'windows-1252 by Content-Type',
      Buffer.from('<p>Gr\xfc\xdfe \x96 x</p>', 'latin1'),
      'text/html; charset=windows-1252',
      '<p>Grüße – x</p>',
    ],
    [
      'windows-1252 by meta',
      Buffer.from('<html><head><meta charset="windows-1252"></head><p>Gr\xfc\xdfe \x96 x</p>', 'latin1'),
      'text/html',
      '<html><head><meta charset="windows-1252"></head><p>Grüße – x</p>',
    ],
    [
      'a byte order mark outranks the label',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]),
      'text/html; charset=windows-1252',
      text,
    ],
    [
      'a meta naming UTF-16 means UTF-8',
      Buffer.from(`<meta charset="utf-16">${text}`, 'utf8'),
      null,
      `<meta charset="utf-16">${text}`,
    ],
    ['an unknown label falls back to UTF-8', Buffer.from(text, 'utf8'), 'text/html; charset=x-made-up', text],
    ['an encoding browsers refuse is read as UTF-8', Buffer.from(text, 'utf8'), 'text/html; charset=iso-2022-kr', text],
  ])('%s', (_name, bytes, contentType, expected) => {
    expect(decodePage(bytes, contentType)).toBe(expected);
  });
});
