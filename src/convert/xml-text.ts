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
 * normalisation does not turn them into spaces when draw.io parses the file.
 */
export class XmlText {
  /** Characters dropped so far because XML 1.0 cannot represent them. */
  dropped = 0;

  /** The value ready to stand between double quotes in an attribute. */
  attr(value: string): string {
    const kept = value.replace(NOT_XML_CHAR, () => {
      this.dropped++;
      return '';
    });
    return kept.replace(/[&<>"\n\r\t]/g, (char) => ESCAPES[char] ?? char);
  }

  /**
   * JSON text (already parsed, so valid) for an attribute, losing nothing: the only characters XML
   * cannot hold that valid JSON may carry raw are U+FFFE and U+FFFF inside strings, and there the
   * `\uXXXX` escape means the same. Everything else is left byte for byte.
   */
  json(raw: string): string {
    return this.attr(raw.replace(/[\uFFFE\uFFFF]/g, (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16)}`));
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
