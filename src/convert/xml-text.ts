/** XML 1.0 production [2] Char, negated; with the `u` flag an unpaired surrogate is one match. */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\n': '&#xa;',
  '\r': '&#xd;',
  '\t': '&#x9;',
};

/**
 * Text into XML 1.0 attribute values. XML 1.0 cannot hold most C0 controls, U+FFFE/U+FFFF or
 * unpaired surrogates, not even as character references, so those are dropped and counted; every
 * other character comes out exactly, newlines and tabs as references so that attribute-value
 * normalisation does not turn them into spaces when draw.io parses the file. PDF text follows the
 * same rule: what XML cannot hold is no text to a PDF reader either.
 *
 * One text is often written more than once (a page's name as its diagram's and its layer's, a
 * layer's elements on every page that shows it). Given the `source` a text comes from, such as
 * `pages/page1.json name`, its dropped characters are counted the first time only.
 */
export class XmlText {
  /** Characters dropped so far because XML 1.0 cannot represent them, once per source. */
  dropped = 0;
  /** Sources already counted; only those that had something to drop, so few. */
  private readonly counted = new Set<string>();

  /** The value without the characters XML 1.0 cannot hold. */
  clean(value: string, source?: string): string {
    let dropped = 0;
    const kept = value.replace(NOT_XML_CHAR, () => {
      dropped++;
      return '';
    });
    if (dropped > 0 && (source === undefined || !this.counted.has(source))) {
      this.dropped += dropped;
      if (source !== undefined) this.counted.add(source);
    }
    return kept;
  }

  /** The value ready to stand between double quotes in an attribute. */
  attr(value: string, source?: string): string {
    return this.clean(value, source).replace(/[&<>"\n\r\t]/g, (char) => ESCAPES[char] ?? char);
  }

  /**
   * JSON text (already parsed, so valid) for an attribute, losing nothing: the only characters XML
   * cannot hold that valid JSON may carry raw are U+FFFE and U+FFFF inside strings, and there the
   * `\uXXXX` escape means the same. Everything else is left byte for byte.
   */
  json(raw: string, source?: string): string {
    return this.attr(
      raw.replace(/[\uFFFE\uFFFF]/g, (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16)}`),
      source,
    );
  }
}

/** A file-name fragment from a prototype's name: lower-case letters, digits and dashes. */
export function slugOf(name: string, maxLength = 60): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxLength)
    .replace(/-+$/g, '');
  return slug === '' ? 'prototype' : slug;
}
