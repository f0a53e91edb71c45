import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { CAPTION_HEIGHT } from '../../src/convert/pdf-binder.js';
import { children, geometryOf, parseDrawio } from './expected.js';
import { exportWithElements } from './helpers.js';
import { requireTool, runTool, tool } from './tools.js';

const PDFTOTEXT = requireTool('/usr/bin/pdftotext', 'poppler-utils');
const RSVG = requireTool('/usr/bin/rsvg-convert', 'librsvg2-bin');

/** Prototype 42's first page is 320x240: these lie left of, above, right of and below it. */
const OFF_CANVAS = [
  { type: 'text', position: { x: -120.5, y: 10 }, dimensions: { width: 100, height: 20 }, text: 'Left Label' },
  { type: 'button', position: { x: 20, y: -60 }, dimensions: { width: 90, height: 24 }, text: 'Above Label' },
  { type: 'text', position: { x: 400, y: 30 }, dimensions: { width: 120, height: 20 }, text: 'Right Label' },
  { type: 'text', position: { x: 30, y: 500 }, dimensions: { width: 110, height: 20 }, text: 'Below Label' },
] as const;
/** The page grows to x -121..520 and y -60..520, so the rendering moves by (121, 60). */
const GROWN = { width: 641, height: 580, left: 121, top: 60 };

let dir: string;
let archive: string;
let page: string;

describe('labels off the rendering are kept in every format', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-off-canvas-'));
    ({ archive, page } = await exportWithElements(dir, OFF_CANVAS));
  }, 120_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const convert = async (to: string): Promise<string> => {
    const out = join(dir, to);
    const report = await convertArchive({ archive, out, to, prototypes: ['42'] });
    expect(report.complete).toBe(true);
    return join(out, report.prototypes[0]?.file as string);
  };

  it('pdf: the page grows and pdftotext finds every label inside its moved box', async () => {
    const file = await convert('pdf');
    const html = await tool(PDFTOTEXT, ['-f', '2', '-l', '2', '-bbox', '-enc', 'UTF-8', file, '-']);
    // The caption strip with the page's number and name lies below the grown page.
    expect(html).toContain(`<page width="${GROWN.width}.000000" height="${GROWN.height + CAPTION_HEIGHT}.000000">`);
    for (const element of OFF_CANVAS) {
      const [first, second] = element.text.split(' ');
      const word = new RegExp(
        `<word xMin="([\\d.]+)" yMin="([\\d.]+)" xMax="([\\d.]+)" yMax="([\\d.]+)">${first} ${second}</word>`,
      ).exec(html);
      expect(word, element.text).not.toBeNull();
      const [xMin, yMin, xMax, yMax] = (word as RegExpExecArray).slice(1).map(Number) as [
        number,
        number,
        number,
        number,
      ];
      const x = element.position.x + GROWN.left;
      const y = element.position.y + GROWN.top;
      expect(xMin).toBeGreaterThanOrEqual(x - 1);
      expect(yMin).toBeGreaterThanOrEqual(y - 1);
      expect(xMax).toBeLessThanOrEqual(x + element.dimensions.width + 1);
      expect(yMax).toBeLessThanOrEqual(y + element.dimensions.height + 1);
    }
  });

  it('svg: rsvg-convert draws the grown page, every label on it, the rendering moved', async () => {
    const folder = await convert('svg');
    const svg = await readFile(join(folder, `01-${page}.svg`), 'utf8');
    expect(svg).toContain(`width="${GROWN.width}" height="${GROWN.height}"`);
    expect(svg).toMatch(new RegExp(`<image x="${GROWN.left}" y="${GROWN.top}" width="320" height="240"`));
    for (const element of OFF_CANVAS) {
      const x = element.position.x + GROWN.left;
      expect(svg).toContain(`<rect x="${x}" y="${element.position.y + GROWN.top}"`);
      expect(svg).toContain(`>${element.text}</tspan>`);
    }
    const run = await runTool(RSVG, ['--format', 'png', join(folder, `01-${page}.svg`)]);
    expect(run.code, run.stderr).toBe(0);
    expect([run.bytes.readUInt32BE(16), run.bytes.readUInt32BE(20)]).toEqual([GROWN.width, GROWN.height]);
  });

  it('drawio: the page grows, the rendering and every element move by the same offset', async () => {
    const file = await convert('drawio');
    const doc = parseDrawio(await readFile(file, 'utf8'));
    const diagram = doc.getElementsByTagName('diagram')[0]!;
    const model = children(diagram, 'mxGraphModel')[0]!;
    expect([model.getAttribute('pageWidth'), model.getAttribute('pageHeight')]).toEqual([
      String(GROWN.width),
      String(GROWN.height),
    ]);
    const cells = [
      ...Array.from(doc.getElementsByTagName('mxCell')),
      ...Array.from(doc.getElementsByTagName('object')),
    ];
    const rendering = cells.find((c) => c.getAttribute('id') === 'rendering-png')!;
    expect(geometryOf(rendering)).toEqual({ x: GROWN.left, y: GROWN.top, width: 320, height: 240 });
    for (const element of OFF_CANVAS) {
      const object = cells.find((c) => c.getAttribute('label') === element.text);
      expect(object, element.text).toBeDefined();
      expect(geometryOf(object!)).toEqual({
        x: element.position.x + GROWN.left,
        y: element.position.y + GROWN.top,
        ...element.dimensions,
      });
    }
  });

  it('excalidraw: the rendering and every element keep their places relative to each other', async () => {
    const folder = await convert('excalidraw');
    const scene = JSON.parse(await readFile(join(folder, `01-${page}.excalidraw`), 'utf8')) as {
      elements: { type: string; x: number; y: number; text?: string; containerId?: string; id: string }[];
    };
    const image = scene.elements.find((e) => e.type === 'image')!;
    expect([image.x, image.y]).toEqual([GROWN.left, GROWN.top]);
    for (const element of OFF_CANVAS) {
      const text = scene.elements.find((e) => e.text === element.text)!;
      const shape = scene.elements.find((e) => e.id === text.containerId)!;
      expect([shape.x, shape.y]).toEqual([element.position.x + GROWN.left, element.position.y + GROWN.top]);
      expect(shape.x).toBeGreaterThanOrEqual(0);
      expect(shape.y).toBeGreaterThanOrEqual(0);
    }
  });
});
