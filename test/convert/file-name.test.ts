import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { documentStem, safeNameOf } from '../../src/convert/file-name.js';

/** Unsafe in a file name somewhere: Windows' reserved characters, the separators, controls. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[/\\:*?"<>|\u0000-\u001f\u007f\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

describe('file names keep the letters of a prototype name', () => {
  it.each([
    ['foo type', 'foo-type'],
    ['Shop 🛒 <i>beta</i> & "friends" – 日本語', 'shop-i-beta-i-friends-日本語'],
    ['ショップ・ベータ版', 'ショップ-ベータ版'],
    ['Αρχική σελίδα', 'αρχική-σελίδα'],
    ['Übersicht Ärger', 'übersicht-ärger'],
    ['שלום עולם', 'שלום-עולם'],
    ['مرحبا بالعالم', 'مرحبا-بالعالم'],
    ['हिन्दी पृष्ठ', 'हिन्दी-पृष्ठ'],
    ['Alt-API Prototyp ✨', 'alt-api-prototyp'],
    ['🚀🚀', 'prototype'],
    ['', 'prototype'],
    ['../../etc/passwd', 'etc-passwd'],
    ['a/b\\c:d*e?f"g<h>i|j', 'a-b-c-d-e-f-g-h-i-j'],
    ['trailing dots... ', 'trailing-dots'],
    ['evil\u202egnp.exe', 'evil-gnp-exe'],
    ['tab\there\nnewline\u0000nul', 'tab-here-newline-nul'],
    ['CON', '_con'],
    ['nul', '_nul'],
    ['Com1', '_com1'],
    ['LPT9', '_lpt9'],
    ['console', 'console'],
  ])('%j -> %j', (name, safe) => {
    expect(safeNameOf(name)).toBe(safe);
    expect(safe).not.toMatch(UNSAFE);
  });

  it('normalises to NFC, so one name has one spelling whatever the service sent', () => {
    expect(safeNameOf('Cafe\u0301')).toBe('caf\u00e9');
    expect(safeNameOf('Caf\u00e9')).toBe('caf\u00e9');
  });

  it('prefixes the id, which keeps names unique and no name reserved', () => {
    expect(documentStem('17', 'Shop 🛒 <i>beta</i> & "friends" – 日本語')).toBe('17-shop-i-beta-i-friends-日本語');
    expect(documentStem('3', 'CON')).toBe('3-_con');
    expect(documentStem('4', null)).toBe('4-prototype');
  });

  it('caps the name in bytes at a whole character, leaving room for the extension and .partial', () => {
    const long = documentStem('123456789', '語'.repeat(300));
    expect(long).toBe(`123456789-${'語'.repeat(60)}`);
    // Marks stacked on one letter: bytes run out long before characters do.
    const stacked = documentStem('5', `a${'\u0301'.repeat(40)}b${'\u0302'.repeat(200)}`);
    expect(stacked).toBe(`5-\u00e1${'\u0301'.repeat(39)}`);
    for (const stem of [long, stacked]) {
      expect(Buffer.byteLength(`${stem}.excalidraw.partial`)).toBeLessThanOrEqual(255);
    }
    const huge = safeNameOf('\u{10348}'.repeat(100), 50);
    expect(Buffer.byteLength(huge)).toBeLessThanOrEqual(50);
    expect(huge).toBe('\u{10348}'.repeat(12));
  });
});
