/**
 * The one escaper for XML and HTML: text and attribute values (always double-quoted) of every
 * document the tool writes. Both grammars share the five characters that matter; XML 1.0 also
 * forbids most control characters, U+FFFE/U+FFFF and unpaired surrogates, even as references, so
 * those never reach a document.
 */

/** XML 1.0 production [2] Char, negated; with the `u` flag an unpaired surrogate is one match. */
export const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  // As references, so attribute-value normalisation does not turn them into spaces on parsing.
  '\n': '&#xa;',
  '\r': '&#xd;',
  '\t': '&#x9;',
};

/** The value without the characters XML 1.0 cannot hold, and how many were dropped. */
export function xmlCharsOf(value: string): { kept: string; dropped: number } {
  let dropped = 0;
  const kept = value.replace(NOT_XML_CHAR, () => {
    dropped++;
    return '';
  });
  return { kept, dropped };
}

/**
 * Text that holds only XML characters, ready to stand between double quotes in an attribute or
 * as an element's content (where the same escapes are as valid, and keep newlines exact).
 */
export function escapeXmlChars(value: string): string {
  return value.replace(/[&<>"\n\r\t]/g, (char) => ESCAPES[char] ?? char);
}

/** Any text for an attribute value or element content: what XML cannot hold dropped, the rest escaped. */
export function escapeXml(value: string): string {
  return escapeXmlChars(xmlCharsOf(value).kept);
}
