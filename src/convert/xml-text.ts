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
    let out = '';
    for (const char of value) out += this.escapeChar(char);
    return out;
  }

  /**
   * JSON text (already parsed, so valid) for an attribute, losing nothing: the only characters XML
   * cannot hold that valid JSON may carry raw are U+FFFE and U+FFFF inside strings, and there the
   * `\uXXXX` escape means the same. Everything else is left byte for byte.
   */
  json(raw: string): string {
    return this.attr(raw.replace(/[\uFFFE\uFFFF]/g, (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16)}`));
  }

  private escapeChar(char: string): string {
    switch (char) {
      case '&':
        return '&amp;';
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '"':
        return '&quot;';
      case '\n':
        return '&#xa;';
      case '\r':
        return '&#xd;';
      case '\t':
        return '&#x9;';
    }
    if (isXmlChar(char.codePointAt(0) ?? 0, char.length)) return char;
    this.dropped++;
    return '';
  }
}

/**
 * XML 1.0 production [2] Char. Iterating a string by code points yields a lone surrogate as a
 * one-unit string whose code point lies in D800-DFFF, which this range check rejects.
 */
export function isXmlChar(code: number, units = 1): boolean {
  if (code === 0x9 || code === 0xa || code === 0xd) return true;
  if (code >= 0x20 && code <= 0xd7ff) return true;
  if (code >= 0xe000 && code <= 0xfffd) return true;
  return units === 2 && code >= 0x10000 && code <= 0x10ffff;
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
