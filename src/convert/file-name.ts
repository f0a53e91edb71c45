/**
 * File and folder names from a prototype's name, safe on every file system the output may be
 * copied to (ext4, APFS, NTFS, FAT, SMB shares) and still readable in the prototype's own script:
 * letters, combining marks and digits of any script are kept (NFC, lower case); everything else
 * (punctuation, symbols, emoji, spaces, controls, bidi and other format characters, and so `/ \ : *
 * ? " < > |`, trailing dots and spaces) becomes one `-`. Windows' reserved device names get a `_`
 * in front. The name is capped in UTF-8 bytes at a whole character, leaving room for the longest
 * extension and the `.partial` of a file being written.
 */

/** NAME_MAX of ext4, APFS and NTFS (NTFS counts UTF-16 units, never more than UTF-8 bytes). */
const NAME_MAX_BYTES = 255;
/** The longest `.{extension}.partial` a format writes, and more. */
const SUFFIX_ROOM = 32;
/** Enough to tell prototypes apart in a listing. */
const MAX_CHARACTERS = 60;

const NOT_KEPT = /[^\p{L}\p{M}\p{N}]+/gu;
/** CON, PRN, AUX, NUL, COM0-9 and LPT0-9 (with the superscript digits Windows also reserves). */
const RESERVED = /^(?:con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])$/i;

/** `{id}-{name}`: unique by the id, which is digits only, and readable by the name. */
export function documentStem(id: string, name: string | null): string {
  return `${id}-${safeNameOf(name ?? '', NAME_MAX_BYTES - SUFFIX_ROOM - Buffer.byteLength(`${id}-`))}`;
}

/** A name fragment safe in any file system, `prototype` when nothing of it can be kept. */
export function safeNameOf(name: string, maxBytes = NAME_MAX_BYTES - SUFFIX_ROOM): string {
  const dashed = name
    .toLowerCase()
    .normalize('NFC')
    .replace(NOT_KEPT, '-')
    .replace(/^-+|-+$/g, '');
  let out = '';
  let characters = 0;
  // Whole graphemes, so a letter never loses its combining marks to the cap.
  for (const { segment } of new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(dashed)) {
    if (characters >= MAX_CHARACTERS || Buffer.byteLength(out + segment) > maxBytes) break;
    out += segment;
    characters++;
  }
  out = out.replace(/-+$/g, '');
  if (out === '') return 'prototype';
  return RESERVED.test(out) ? `_${out}` : out;
}
