/**
 * The one escaper for XML and HTML: element content and attribute values (always double-quoted)
 * of every document the tool writes, the draw.io and SVG files, the overview pages, the fake
 * service's XHTML. XML 1.0 forbids most control characters, U+FFFE/U+FFFF and unpaired surrogates,
 * even as references, so those never reach a document; HTML calls them parse errors, so the same
 * rule serves both.
 *
 * Two contexts, because each has one thing the other does not need:
 * - content: `&` and `<` would start markup, `>` would end a CDATA section (`]]>` may not appear
 *   in content), and a CR would be read as a line feed (XML end-of-line handling; HTML's input
 *   stream does the same), so it is a reference. Quotes, tabs and line feeds stay as they are.
 * - attribute: the same and `"`, which would end the value; tab, line feed and CR as references,
 *   because an XML parser turns them into spaces when it normalises the value. HTML does not
 *   normalise, and reads those references as the same characters.
 * `'` is never escaped: no attribute we write is single-quoted.
 *
 * HTML flags a reference to CR (`&#xd;`) as a parse error but still reads it as CR, as XML does:
 * the text comes out exactly, which is what matters in a page that shows the service's text.
 */

/** XML 1.0 production [2] Char, negated; with the `u` flag an unpaired surrogate is one match. */
export const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\n': '&#xa;',
  '\r': '&#xd;',
  '\t': '&#x9;',
};

const IN_CONTENT = /[&<>\r]/g;
const IN_ATTRIBUTE = /[&<>"\n\r\t]/g;

/** The value without the characters XML 1.0 cannot hold, and how many were dropped. */
export function xmlCharsOf(value: string): { kept: string; dropped: number } {
  let dropped = 0;
  const kept = value.replace(NOT_XML_CHAR, () => {
    dropped++;
    return '';
  });
  return { kept, dropped };
}

/** Text already holding only XML characters (xmlCharsOf), ready to be element content. */
export function escapeContentChars(value: string): string {
  return value.replace(IN_CONTENT, (char) => ESCAPES[char] ?? char);
}

/** Text already holding only XML characters (xmlCharsOf), ready to stand between double quotes. */
export function escapeAttributeChars(value: string): string {
  return value.replace(IN_ATTRIBUTE, (char) => ESCAPES[char] ?? char);
}

/** Any text as element content: what XML cannot hold dropped, the rest escaped. */
export function escapeText(value: string): string {
  return escapeContentChars(xmlCharsOf(value).kept);
}

/** Any text as a double-quoted attribute value: what XML cannot hold dropped, the rest escaped. */
export function escapeAttribute(value: string): string {
  return escapeAttributeChars(xmlCharsOf(value).kept);
}
