import { escapeAttributeChars, escapeContentChars, xmlCharsOf } from '../core/xml-escape.js';

/**
 * Text into XML 1.0 through the one escaper (core/xml-escape.ts), counting what it drops. Every
 * other character comes out exactly. PDF text follows the same rule: what XML cannot hold is no
 * text to a PDF reader either.
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
    const { kept, dropped } = xmlCharsOf(value);
    if (dropped > 0 && (source === undefined || !this.counted.has(source))) {
      this.dropped += dropped;
      if (source !== undefined) this.counted.add(source);
    }
    return kept;
  }

  /** The value ready to stand between double quotes in an attribute. */
  attr(value: string, source?: string): string {
    return escapeAttributeChars(this.clean(value, source));
  }

  /** The value ready to be an element's content. */
  content(value: string, source?: string): string {
    return escapeContentChars(this.clean(value, source));
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
