import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchChromium, type BrowserContext } from '../browser/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import type { ConvertReport } from '../../src/convert/report.js';
import { expectedFrom, pageSizeOf, type ExpectedPrototype } from './expected.js';
import { exportSample, withoutNonXml } from './helpers.js';
import { requireTool, runTool, tool } from './tools.js';
import { CHROMIUM, TOOL_PACKAGES } from '../helpers/tools.js';

/** The SVG pages read back by python's XML parser, librsvg (rsvg-convert) and Chromium. */
requireTool(CHROMIUM, TOOL_PACKAGES[CHROMIUM]);
const RSVG = requireTool('/usr/bin/rsvg-convert', 'librsvg2-bin');
const PYTHON = requireTool('/usr/bin/python3', 'python3');

let dir: string;
let out: string;
let report: ConvertReport;
let expected: ExpectedPrototype[];

/** Python's ElementTree (expat): every element id, its data-element, label, link and layer. */
const DESCRIBE_SVG = String.raw`
import json, sys, xml.etree.ElementTree as ET
SVG = '{http://www.w3.org/2000/svg}'
INK = '{http://www.inkscape.org/namespaces/inkscape}'
out = []
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()
    page = {'file': path, 'width': root.get('width'), 'height': root.get('height'), 'layers': [], 'elements': {}, 'links': {}, 'discussions': []}
    for layer in root.findall(SVG + 'g'):
        page['layers'].append({'id': layer.get('id'), 'mode': layer.get(INK + 'groupmode'), 'label': layer.get(INK + 'label'), 'images': len(layer.findall(SVG + 'image'))})
    for anchor in root.iter(SVG + 'a'):
        for g in anchor.findall(SVG + 'g'):
            page['links'][g.get('id')] = anchor.get('href')
    for g in root.iter(SVG + 'g'):
        if g.get('class') == 'element':
            text = g.find(SVG + 'text')
            lines = [] if text is None else [''.join(t.itertext()) for t in text.findall(SVG + 'tspan')]
            page['elements'][g.get('id')] = {'json': g.get('data-element'), 'lines': lines, 'rect': g.find(SVG + 'rect').attrib}
        if g.get('class') == 'discussion':
            page['discussions'].append(g.find(SVG + 'title').text)
    out.append(page)
print(json.dumps(out))
`;

interface DescribedPage {
  file: string;
  width: string;
  height: string;
  layers: { id: string; mode: string; label: string; images: number }[];
  elements: Record<string, { json: string; lines: string[]; rect: Record<string, string> }>;
  links: Record<string, string>;
  discussions: string[];
}

const folderOf = (proto: ExpectedPrototype): string =>
  join(out, report.prototypes.find((p) => p.id === proto.id)?.file as string);

describe('convert --to svg, read back by python, rsvg-convert and Chromium', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-svg-'));
    const archive = await exportSample(dir);
    expected = await expectedFrom(archive);
    out = join(dir, 'svg');
    report = await convertArchive({ archive, out, to: 'svg' });
  }, 120_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('writes a folder per prototype with one standalone SVG per page', async () => {
    expect(report.to).toBe('svg');
    expect(report.complete).toBe(true);
    for (const proto of expected) {
      const files = (await readdir(folderOf(proto))).sort();
      expect(files).toEqual(proto.pages.map((p, i) => `${String(i + 1).padStart(2, '0')}-${p.id}.svg`));
      for (const file of files) {
        const svg = await readFile(join(folderOf(proto), file), 'utf8');
        // Standalone: the only reference outside the file is to its sibling pages.
        expect(svg).not.toMatch(/href="(?!data:image\/png;base64,|\d\d-page[A-Za-z0-9]+\.svg")/);
      }
    }
  });

  it('parses as XML with every element, label, link, layer and discussion in place', async () => {
    for (const proto of expected) {
      const files = proto.pages.map((p, i) => join(folderOf(proto), `${String(i + 1).padStart(2, '0')}-${p.id}.svg`));
      const pages = JSON.parse(await tool(PYTHON, ['-c', DESCRIBE_SVG, ...files])) as DescribedPage[];
      for (const [index, page] of proto.pages.entries()) {
        const svg = pages[index] as DescribedPage;
        const size = pageSizeOf(page);
        expect([Number(svg.width), Number(svg.height)]).toEqual([size.width, size.height]);
        expect(svg.layers[0]).toEqual({ id: 'rendering', mode: 'layer', label: 'rendering', images: 1 });
        expect(svg.layers.slice(1).map((l) => l.label)).toEqual([
          ...page.layers.map((l) => l.name),
          page.name,
          ...(page.discussions.length > 0 ? ['Discussions'] : []),
        ]);
        expect(svg.layers.every((l) => l.mode === 'layer')).toBe(true);
        const all = [...page.layers.flatMap((l) => l.elements), ...page.elements];
        expect(Object.keys(svg.elements).sort()).toEqual(all.map((e) => e.id).sort());
        for (const element of all) {
          const drawn = svg.elements[element.id];
          expect(JSON.parse(drawn?.json ?? 'null')).toEqual(element.json);
          const { x, y } = element.json.position as { x: number; y: number };
          const { width, height } = element.json.dimensions as { width: number; height: number };
          expect(drawn?.rect).toMatchObject({
            x: String(x),
            y: String(y),
            width: String(width),
            height: String(height),
          });
          const text = typeof element.json.text === 'string' ? withoutNonXml(element.json.text) : '';
          expect(drawn?.lines.join('\n')).toBe(text.replace(/\r\n|\r/g, '\n'));
          const target = element.json.target;
          const targetIndex = proto.pages.findIndex((p) => p.id === target);
          // A link to a page of the prototype names that page's file; any other target, none.
          expect(svg.links[element.id]).toBe(
            targetIndex >= 0 ? `${String(targetIndex + 1).padStart(2, '0')}-${target as string}.svg` : undefined,
          );
        }
        expect(svg.discussions.length).toBe(page.discussions.length);
        for (const [i, discussion] of page.discussions.entries()) {
          for (const entry of discussion.entries as { author: string; text: string }[]) {
            expect(svg.discussions[i]).toContain(entry.author);
            expect(svg.discussions[i]).toContain(entry.text);
          }
        }
      }
    }
  });

  it('rsvg-convert renders every page at its size', async () => {
    for (const proto of expected) {
      for (const [index, page] of proto.pages.entries()) {
        const file = join(folderOf(proto), `${String(index + 1).padStart(2, '0')}-${page.id}.svg`);
        const run = await runTool(RSVG, ['--format', 'png', file]);
        expect(run.code, run.stderr).toBe(0);
        expect(run.bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
        const size = pageSizeOf(page);
        expect([run.bytes.readUInt32BE(16), run.bytes.readUInt32BE(20)]).toEqual([size.width, size.height]);
        expect(run.bytes.length).toBeGreaterThan(200);
      }
    }
  });

  it('Chromium draws every element and the rendering, and follows a page link', async () => {
    let browser: BrowserContext | undefined;
    try {
      browser = await launchChromium(CHROMIUM);
      const page = await browser.newPage();
      const refused: string[] = [];
      await page.route('**/*', async (route) => {
        const url = route.request().url();
        if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
        refused.push(url);
        return route.abort();
      });
      let followed = 0;
      for (const proto of expected) {
        for (const [index, expectedPage] of proto.pages.entries()) {
          const file = join(folderOf(proto), `${String(index + 1).padStart(2, '0')}-${expectedPage.id}.svg`);
          await page.goto(pathToFileURL(file).href);
          const drawn = await page.evaluate(`(() => {
            const boxes = [...document.querySelectorAll('g.element')].map((g) => [g.id, g.querySelector('rect').getBBox().width > 0]);
            const image = document.querySelector('#rendering image');
            return { boxes, image: image ? image.getBBox().width : 0, errors: document.querySelectorAll('parsererror').length };
          })()`);
          const { boxes, image, errors } = drawn as { boxes: [string, boolean][]; image: number; errors: number };
          expect(errors).toBe(0);
          expect(image).toBe(expectedPage.png.readUInt32BE(16));
          const all = [...expectedPage.layers.flatMap((l) => l.elements), ...expectedPage.elements];
          expect(boxes.map(([id]) => id).sort()).toEqual(all.map((e) => e.id).sort());
          expect(boxes.every(([, shown]) => shown)).toBe(true);
          const linked = all.find((e) => proto.pages.some((p) => p.id === e.json.target));
          if (linked === undefined) continue;
          await page.evaluate(
            `document.getElementById(${JSON.stringify(linked.id)}).parentElement.dispatchEvent(new MouseEvent('click', { bubbles: true }))`,
          );
          await page.waitForURL(new RegExp(`-${linked.json.target as string}\\.svg$`));
          followed++;
        }
      }
      expect(followed).toBeGreaterThan(0);
      expect(refused).toEqual([]);
    } finally {
      await browser?.close();
    }
  }, 120_000);
});
