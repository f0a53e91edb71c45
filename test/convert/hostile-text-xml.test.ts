import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagramXml, mxfileClose, mxfileOpen } from '../../src/convert/drawio-xml.js';
import type { PageContent } from '../../src/convert/page-walk.js';
import type { ElementData } from '../../src/convert/prototype-data.js';
import { svgPage } from '../../src/convert/svg-pages.js';
import { XmlText } from '../../src/convert/xml-text.js';
import { requireTool, tool } from './tools.js';

/**
 * One value that would end an attribute, open markup, close a CDATA section or break XML 1.0 as
 * it stands, written in every place the draw.io and SVG writers take text from an archive: the
 * documents must be well-formed to expat (python3's minidom) and give each value back, less only
 * what XML 1.0 cannot hold.
 */
const PYTHON = requireTool('/usr/bin/python3', 'python3');

const HOSTILE = `a<b>&amp; "c" 'd' ]]> <![CDATA[x]]> <!-- e\u0000\u0001\u0008\u000b\u000c\u001f\uFFFE\uFFFF f\uD800 g\uDC00 h\r\n\ti 🚀 ß`;
/** What XML 1.0 can hold of it: the C0 controls but tab, CR and LF, U+FFFE/U+FFFF and lone surrogates go. */
const KEPT = `a<b>&amp; "c" 'd' ]]> <![CDATA[x]]> <!-- e f g h\r\n\ti 🚀 ß`;
const DROPPED = [...HOSTILE].length - [...KEPT].length;

/** Every element in document order: its name, attributes and own text, as expat read them. */
const READ_XML = String.raw`
import json, sys, xml.dom.minidom as minidom
out = []
def walk(node):
    if node.nodeType == node.ELEMENT_NODE:
        text = ''.join(c.data for c in node.childNodes if c.nodeType in (c.TEXT_NODE, c.CDATA_SECTION_NODE))
        out.append({'name': node.tagName, 'attrs': dict(node.attributes.items()), 'text': text})
    for child in node.childNodes:
        walk(child)
walk(minidom.parse(sys.argv[1]))
print(json.dumps(out))
`;

interface ReadElement {
  name: string;
  attrs: Record<string, string>;
  text: string;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hostile-xml-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function readBack(name: string, xml: string): Promise<ReadElement[]> {
  const file = join(dir, name);
  await writeFile(file, xml, 'utf8');
  return JSON.parse(await tool(PYTHON, ['-c', READ_XML, file])) as ReadElement[];
}

const json = JSON.stringify({ id: 'element1', text: HOSTILE, type: HOSTILE });
const element: ElementData = {
  id: HOSTILE,
  entry: 'pages/page1/elements/element1.json',
  raw: json,
  type: HOSTILE,
  box: { x: 10, y: 20, width: 200, height: 40 },
  text: HOSTILE,
  target: HOSTILE,
  style: { color: HOSTILE },
};
const content: PageContent = {
  page: { id: 'page1', name: HOSTILE, layerIds: ['layer1'] },
  number: 1,
  size: { width: 400, height: 300 },
  png: undefined,
  layers: [{ id: 'layer1', name: HOSTILE, elements: [] }],
  elements: [element],
  discussions: [
    {
      id: 'discussion1',
      raw: JSON.stringify({ title: HOSTILE }),
      pageId: 'page1',
      title: HOSTILE,
      x: 5,
      y: 5,
      entries: [{ author: HOSTILE, timestamp: null, text: HOSTILE }],
    },
  ],
};

describe('hostile text in the draw.io and SVG writers', () => {
  it('the draw.io document is well-formed and gives every value back', async () => {
    const text = new XmlText();
    const { xml } = diagramXml({ ...content, pageIds: new Set(['page1']) }, text);
    const read = await readBack('page.drawio', mxfileOpen(HOSTILE, text) + xml + mxfileClose());
    const attr = (name: string, key: string): string[] =>
      read.filter((e) => e.name === name && key in e.attrs).map((e) => e.attrs[key] as string);

    expect(attr('mxfile', 'agent')).toEqual([`rabbit-export ${KEPT}`]);
    expect(attr('diagram', 'name')).toEqual([KEPT]);
    expect(attr('mxCell', 'value')).toEqual(expect.arrayContaining([KEPT]));
    expect(attr('object', 'label')).toEqual([KEPT, `${KEPT}\n${KEPT}, undated: ${KEPT}`]);
    expect(attr('object', 'rabbitId')).toEqual([KEPT]);
    expect(attr('object', 'rabbitType')).toEqual([KEPT]);
    expect(attr('object', 'tooltip')).toEqual([`Rabbit element of type "${KEPT}" (no draw.io shape for it)`]);
    // JSON is kept whole: what XML cannot hold is already escaped in it, or comes back as its escape.
    expect(attr('object', 'rabbitJson').map((j) => JSON.parse(j) as unknown)).toEqual([
      JSON.parse(json),
      { title: HOSTILE },
    ]);
    expect(text.dropped).toBeGreaterThanOrEqual(DROPPED);
  });

  it('the SVG page is well-formed and gives every value back', async () => {
    const text = new XmlText();
    const { xml } = svgPage(content, new Map(), text);
    const read = await readBack('page.svg', xml);
    const titles = read.filter((e) => e.name === 'title').map((e) => e.text);
    const groups = read.filter((e) => e.name === 'g');

    expect(titles).toEqual([KEPT, KEPT, `${KEPT}\n${KEPT}, undated: ${KEPT}`]);
    expect(groups.map((g) => g.attrs['inkscape:label']).filter((l) => l !== undefined)).toEqual([
      KEPT,
      KEPT,
      'Discussions',
    ]);
    const shape = groups.find((g) => g.attrs.class === 'element');
    expect(shape?.attrs.id).toBe(KEPT);
    expect(shape?.attrs['data-type']).toBe(KEPT);
    expect(JSON.parse(shape?.attrs['data-element'] ?? 'null')).toEqual(JSON.parse(json));
    const lines = read.filter((e) => e.name === 'tspan').map((e) => e.text);
    expect(lines).toEqual(KEPT.split(/\r\n|\r|\n/));
    expect(text.dropped).toBeGreaterThanOrEqual(DROPPED);
  });
});
