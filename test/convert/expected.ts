import { DOMParser, type Document, type Element } from '@xmldom/xmldom';
import { readArchive } from '../helpers/archive.js';

/**
 * What a converted archive must show, read from the archive with the test helpers (not with
 * src/convert), and a strict parse of the .drawio files it became.
 */
export interface ExpectedElement {
  id: string;
  raw: string;
  json: Record<string, unknown>;
}

export interface ExpectedPage {
  id: string;
  name: string;
  png: Buffer;
  layers: { id: string; name: string; elements: ExpectedElement[] }[];
  elements: ExpectedElement[];
  discussions: Record<string, unknown>[];
}

export interface ExpectedPrototype {
  id: string;
  revision: number;
  name: string;
  pages: ExpectedPage[];
}

export async function expectedFrom(archive: string): Promise<ExpectedPrototype[]> {
  const { manifest, entries } = await readArchive(archive);
  const out: ExpectedPrototype[] = [];
  for (const [id, record] of Object.entries(manifest.prototypes)) {
    const dir = `prototypes/${id}/r${record.revision}/`;
    const body = (rest: string): Buffer => {
      const entry = entries.get(dir + rest);
      if (!entry) throw new Error(`no ${dir}${rest}`);
      return entry.data;
    };
    const json = (rest: string): unknown => JSON.parse(body(rest).toString('utf8'));
    const ids = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : Object.keys(value as object));
    const elementsOf = (parent: string): ExpectedElement[] =>
      ids(json(`${parent}/elements.json`)).map((elementId) => {
        const raw = body(`${parent}/elements/${elementId}.json`).toString('utf8');
        return { id: elementId, raw, json: JSON.parse(raw) as Record<string, unknown> };
      });
    const discussions = [...entries.keys()]
      .filter((name) => name.startsWith(`${dir}discussions/`))
      .map((name) => JSON.parse(entries.get(name)!.data.toString('utf8')) as Record<string, unknown>)
      .sort((a, b) => Number(a.id) - Number(b.id));
    const pages = ids(json('pages.json')).map((pageId) => {
      const meta = json(`pages/${pageId}.json`) as { name: string; layers: string[] };
      return {
        id: pageId,
        name: meta.name,
        png: body(`pages/${pageId}.png`),
        layers: meta.layers.map((layerId) => ({
          id: layerId,
          name: (json(`layers/${layerId}.json`) as { name: string }).name,
          elements: elementsOf(`layers/${layerId}`),
        })),
        elements: elementsOf(`pages/${pageId}`),
        discussions: discussions.filter((d) => d.pageId === pageId),
      };
    });
    out.push({ id, revision: record.revision, name: record.name ?? '', pages });
  }
  return out;
}

/** Parses a .drawio file, failing on any XML error rather than recovering from it. */
export function parseDrawio(xml: string): Document {
  return new DOMParser({
    onError: (level, message) => {
      throw new Error(`draw.io file is not well-formed XML (${level}): ${message}`);
    },
  }).parseFromString(xml, 'text/xml');
}

export function children(node: Element, tag?: string): Element[] {
  const out: Element[] = [];
  for (let child = node.firstChild; child !== null; child = child.nextSibling) {
    if (child.nodeType === 1 && (tag === undefined || (child as Element).tagName === tag)) out.push(child as Element);
  }
  return out;
}

/** A cell's parent and geometry, whether it stands alone or inside an `<object>`. */
export function cellOf(node: Element): Element {
  return node.tagName === 'object' ? (children(node, 'mxCell')[0] as Element) : node;
}

export function geometryOf(node: Element): { x: number; y: number; width: number; height: number } {
  const geometry = children(cellOf(node), 'mxGeometry')[0] as Element;
  const num = (name: string): number => Number(geometry.getAttribute(name) ?? 'NaN');
  return { x: num('x'), y: num('y'), width: num('width'), height: num('height') };
}

/**
 * The size convert gives a page: its rendering grown to hold every element's box (whole units),
 * so that no label falls off it; `left` and `top` are how far the rendering moves right and down.
 */
export function pageSizeOf(page: ExpectedPage): { width: number; height: number; left: number; top: number } {
  let [left, top, right, bottom] = [0, 0, page.png.readUInt32BE(16), page.png.readUInt32BE(20)];
  for (const element of [...page.layers.flatMap((l) => l.elements), ...page.elements]) {
    const { x, y } = element.json.position as { x: number; y: number };
    const { width, height } = element.json.dimensions as { width: number; height: number };
    left = Math.min(left, Math.floor(x));
    top = Math.min(top, Math.floor(y));
    right = Math.max(right, Math.ceil(x + width));
    bottom = Math.max(bottom, Math.ceil(y + height));
  }
  return { width: right - left, height: bottom - top, left: -left, top: -top };
}
