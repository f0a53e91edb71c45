/**
 * The one place text from an archive, the service or an error becomes safe for a terminal. Names
 * are hostile: ESC and BEL would drive the terminal, and the invisible format characters (bidi
 * overrides and isolates U+202A-202E and U+2066-2069, the marks U+200E/U+200F/U+061C, zero-width
 * spaces, tag characters) would make a name read as another (`evil\u202Egnp.exe` shows as
 * `evilexe.png`). Each becomes a visible `<U+202E>`; the zero-width joiner stays, so emoji
 * sequences survive. Every command prints names through printable (or format-archive's clean).
 */

/** Line breaks and tabs: a space, so that one name stays on one line. */
const BREAKS = /[\r\n\t]/g;
/** Controls, format characters, lone surrogates and the Unicode line separators, but ZWJ. */
const INVISIBLE = /(?!\u200d)[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/gu;

export function printable(text: string): string {
  return text.replace(BREAKS, ' ').replace(INVISIBLE, codePointTag);
}

/** `<U+202E>`: what the character is, in the form Unicode charts name it. */
function codePointTag(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/**
 * One line of JSON for a terminal: JSON.stringify escapes C0 controls only, so the same characters
 * printable tags (C1 such as CSI U+009B, bidi overrides, separators) are written as `\u` escapes
 * here. Still JSON, and read back the same.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value).replace(INVISIBLE, (char) =>
    Array.from({ length: char.length }, (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}
