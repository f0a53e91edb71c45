import type { XmlText } from './xml-text.js';

/**
 * Builds XML elements for the draw.io and SVG writers, so that every value goes through the one
 * escaper: attribute values and text always, names only from this code (checked, never data).
 * Children are elements this builder made, `content` or whitespace. A value `{ json }` is JSON kept
 * exactly (XmlText.json).
 */
export type XmlAttr = readonly [name: string, value: string | number | { json: string }, source?: string | undefined];

/** Built XML, as opposed to a plain string that would still need escaping. */
export interface XmlNode {
  readonly xml: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_.:-]*$/;

export class XmlBuilder {
  constructor(private readonly text: XmlText) {}

  /** `<name a="v"/>`, or with children `<name a="v">...</name>`; an undefined or false attribute is left out. */
  element(name: string, attrs: readonly (XmlAttr | undefined | false)[], children?: readonly XmlNode[]): XmlNode {
    const start = this.startTag(name, attrs);
    if (children === undefined) return { xml: `${start}/>` };
    return { xml: `${start}>${children.map((child) => child.xml).join('')}</${name}>` };
  }

  /** The start tag alone, for a document written a piece at a time; `endTag` closes it. */
  start(name: string, attrs: readonly (XmlAttr | undefined | false)[]): XmlNode {
    return { xml: `${this.startTag(name, attrs)}>` };
  }

  /** Character data. */
  content(value: string, source?: string): XmlNode {
    return { xml: this.text.content(value, source) };
  }

  private startTag(name: string, attrs: readonly (XmlAttr | undefined | false)[]): string {
    let xml = `<${checked(name)}`;
    for (const attr of attrs) {
      if (attr === undefined || attr === false) continue;
      const [attrName, value, source] = attr;
      const escaped =
        typeof value === 'number'
          ? numberOf(value)
          : typeof value === 'string'
            ? this.text.attr(value, source)
            : this.text.json(value.json, source);
      xml += ` ${checked(attrName)}="${escaped}"`;
    }
    return xml;
  }
}

/** The end tag of an element begun with `start`. */
export function endTag(name: string): XmlNode {
  return { xml: `</${checked(name)}>` };
}

/** Whitespace between elements, for files a person may read. */
export function raw(xml: string): XmlNode {
  if (/[<&]/.test(xml)) throw new TypeError('raw XML may only be whitespace or fixed punctuation');
  return { xml };
}

function checked(name: string): string {
  if (!NAME.test(name)) throw new TypeError(`${JSON.stringify(name)} is no XML name`);
  return name;
}

function numberOf(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`${value} is no coordinate`);
  return String(value);
}
