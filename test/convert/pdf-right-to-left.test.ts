import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../browser/index.js';
import type { PagePlan, PrototypeHead } from '../../src/convert/page-walk.js';
import { pdfBinder } from '../../src/convert/pdf-binder.js';
import { NO_FONTS } from '../../src/convert/pdf/system-fonts.js';
import type { PageMeta } from '../../src/convert/prototype-data.js';
import { XmlText } from '../../src/convert/xml-text.js';
import { requireTool, tool } from './tools.js';
import { CHROMIUM, TOOL_PACKAGES } from '../helpers/tools.js';

/**
 * Right-to-left text in a binder against Chromium's own print-to-PDF of the same strings, both in
 * DejaVu Sans Bold at 22 pt (a binder's title): pdftotext reads both back alike, in logical order,
 * and pdftoppm draws both alike, Arabic shaped (letters joined, lam-alef as one ligature), words and
 * numbers in their places. The pictures are told apart from what a wrong binder would draw, the
 * same strings unjoined or laid left to right, so that the comparison is known to see the difference.
 */
requireTool(CHROMIUM, TOOL_PACKAGES[CHROMIUM]);
const PDFTOTEXT = requireTool('/usr/bin/pdftotext', 'poppler-utils');
const PDFTOPPM = requireTool('/usr/bin/pdftoppm', 'poppler-utils');

const STRINGS = ['مرحبا بالعالم', 'السلام عليكم', 'שלום עולם 123', 'abc שלום def', 'عربي 2024 نص'];
/** Dots per inch of the pictures compared: 22 pt text is about 40 pixels high. */
const DPI = 130;
/**
 * Shares of dark pixels that differ: the same glyphs drawn by two programs differ by 1-13% (edges
 * fall on other pixels); one word of three laid left to right already differs by about 30%.
 */
const SAME = 0.2;
const DIFFERENT = 0.25;

let dir: string;
let chromium: string;
let unjoined: string;
let reversed: string;
const binders: string[] = [];

/**
 * A binder's title page as a browser prints it, one per string: the string as the name, the
 * paragraph's direction from its first strong character, then the title page's other lines, since
 * pdftotext orders a line's words by the direction most of the page's letters take.
 */
function pagesHtml(strings: readonly string[], wrap: (text: string) => string = (text) => text): string {
  const rest = TITLE_PAGE_REST.map((line) => `<p class="rest">${line}</p>`).join('');
  const pages = strings.map((text) => `<section><p dir="auto">${wrap(text)}</p>${rest}</section>`).join('\n');
  return `<!doctype html><meta charset="utf-8"><style>
    @page { size: A4; margin: 0 } body { margin: 56pt; font: bold 22pt 'DejaVu Sans' }
    p { margin: 0 } p.rest { font: 12pt 'DejaVu Sans'; margin-top: 6pt } section { break-after: page }
  </style>${pages}`;
}

/** What the binders' title pages say below the name, for the prototype of `binder` below. */
const TITLE_PAGE_REST = [
  'Prototype 5, revision 1',
  'Last modified undated',
  '1 page',
  'Milestones',
  'none saved',
  'Pages',
  '1. Page',
];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-pdf-rtl-'));
  for (const [index, name] of STRINGS.entries()) {
    const page: PageMeta = { id: 'page1', name: 'Page', layerIds: [] };
    const head: PrototypeHead = { id: '5', name, revision: 1, lastModification: null, lastUser: null, milestones: [] };
    const plan: PagePlan = { pages: [page], pageIds: new Set(['page1']), discussions: new Map() };
    // The bundled font alone: the machine's own fonts play no part in what is compared.
    const { bytes } = await pdfBinder(head, plan, (async function* () {})(), new XmlText(), { fonts: NO_FONTS });
    const file = join(dir, `binder-${index}.pdf`);
    await writeFile(file, bytes);
    binders.push(file);
  }
  const context = await launchChromium(CHROMIUM);
  try {
    const print = async (html: string, name: string): Promise<string> => {
      const page = await context.newPage();
      await page.setContent(html);
      const file = join(dir, name);
      await writeFile(file, await page.pdf({ format: 'A4', margin: { top: 0, right: 0, bottom: 0, left: 0 } }));
      await page.close();
      return file;
    };
    chromium = await print(pagesHtml(STRINGS), 'chromium.pdf');
    // What a binder must not look like: letters kept apart by zero-width non-joiners, or laid left to right.
    unjoined = await print(
      pagesHtml(STRINGS, (text) => [...text].join('\u200c')),
      'unjoined.pdf',
    );
    reversed = await print(
      pagesHtml(STRINGS, (text) => `<bdo dir="ltr">${text}</bdo>`),
      'reversed.pdf',
    );
  } finally {
    await context.close();
  }
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * What poppler read or drew of each page, kept: several tests compare the same page (a binder's
 * against Chromium's, against its letters unjoined, against it laid left to right), and the files
 * do not change once beforeAll wrote them.
 */
const read = new Map<string, Promise<unknown>>();
function once<T>(what: string, file: string, page: number, make: () => Promise<T>): Promise<T> {
  const key = `${what} ${page} ${file}`;
  let kept = read.get(key) as Promise<T> | undefined;
  if (kept === undefined) {
    kept = make();
    read.set(key, kept);
  }
  return kept;
}

/** The first line pdftotext reads on one page, in its reading order. */
function firstLine(file: string, page: number): Promise<string> {
  return once('text', file, page, () => firstLineRead(file, page));
}

async function firstLineRead(file: string, page: number): Promise<string> {
  const text = await tool(PDFTOTEXT, ['-enc', 'UTF-8', '-f', String(page), '-l', String(page), file, '-']);
  return text.split('\n')[0] as string;
}

interface Ink {
  width: number;
  height: number;
  /** Row-major, 1 where the pixel is dark. */
  bits: Uint8Array;
}

/** The first line of ink on a page as pdftoppm draws it (grey, PGM), cropped to its bounding box. */
function inkOfFirstLine(file: string, page: number): Promise<Ink> {
  return once('ink', file, page, () => inkRead(file, page));
}

async function inkRead(file: string, page: number): Promise<Ink> {
  const prefix = join(dir, `ink-${Math.random().toString(36).slice(2)}`);
  await tool(PDFTOPPM, [
    '-gray',
    '-r',
    String(DPI),
    '-f',
    String(page),
    '-l',
    String(page),
    '-singlefile',
    file,
    prefix,
  ]);
  const pgm = await readFile(`${prefix}.pgm`);
  const header = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(pgm.subarray(0, 40).toString('latin1'));
  if (header === null) throw new Error('pdftoppm wrote no 8-bit PGM');
  const [width, height] = [Number(header[1]), Number(header[2])];
  const pixels = pgm.subarray(header[0].length);
  const dark = (x: number, y: number): boolean => (pixels[y * width + x] as number) < 128;
  const rowHasInk = (y: number): boolean => Array.from({ length: width }, (_, x) => x).some((x) => dark(x, y));
  let top = 0;
  while (top < height && !rowHasInk(top)) top++;
  let bottom = top;
  while (bottom < height && rowHasInk(bottom)) bottom++;
  let left = width;
  let right = 0;
  for (let y = top; y < bottom; y++) {
    for (let x = 0; x < width; x++) {
      if (!dark(x, y)) continue;
      left = Math.min(left, x);
      right = Math.max(right, x + 1);
    }
  }
  const ink = { width: right - left, height: bottom - top, bits: new Uint8Array((right - left) * (bottom - top)) };
  for (let y = top; y < bottom; y++) {
    for (let x = left; x < right; x++) ink.bits[(y - top) * ink.width + (x - left)] = dark(x, y) ? 1 : 0;
  }
  return ink;
}

/** The share of dark pixels, in either picture, that the other has not, their top-left corners put together. */
function difference(a: Ink, b: Ink): number {
  let differ = 0;
  let dark = 0;
  for (let y = 0; y < Math.max(a.height, b.height); y++) {
    for (let x = 0; x < Math.max(a.width, b.width); x++) {
      const inA = x < a.width && y < a.height && a.bits[y * a.width + x] === 1;
      const inB = x < b.width && y < b.height && b.bits[y * b.width + x] === 1;
      if (inA || inB) dark++;
      if (inA !== inB) differ++;
    }
  }
  return differ / Math.max(dark, 1);
}

describe('right-to-left text in a binder, against Chromium printing the same strings', () => {
  // The words' order and spaces follow the page: poppler sets a line's words in the direction most
  // of the page's letters take, so a number after Hebrew comes first on this English page.
  const words = (line: string): string[] => (line.match(/[\u0590-\u06ff]+/g) ?? []).sort();
  const indexed = STRINGS.map((text, index) => ({ text, index }));
  /** Chromium's lam-alef ligature reads back reversed ("السالم"): there the binder reads better. */
  const LAM_ALEF = /\u0644\u0627/;

  it.each(indexed)('pdftotext reads every word of $text in logical order', async ({ text, index }) => {
    expect(words(await firstLine(binders[index] as string, 1))).toEqual(words(text));
  });

  it.each(indexed.filter(({ text }) => !LAM_ALEF.test(text)))(
    'pdftotext reads $text as it reads Chromium’s',
    async ({ index }) => {
      expect(await firstLine(binders[index] as string, 1)).toBe(await firstLine(chromium, index + 1));
    },
  );

  it.each(indexed.filter(({ text }) => LAM_ALEF.test(text)))(
    'Chromium’s lam-alef in $text reads back reversed, the binder’s does not',
    async ({ text, index }) => {
      expect(words(await firstLine(chromium, index + 1))).not.toEqual(words(text));
    },
  );

  it.each(indexed)('pdftoppm draws $text as it draws Chromium’s: shaped, in visual order', async ({ index }) => {
    const ours = await inkOfFirstLine(binders[index] as string, 1);
    const theirs = await inkOfFirstLine(chromium, index + 1);
    expect(Math.abs(ours.width - theirs.width)).toBeLessThanOrEqual(3);
    expect(Math.abs(ours.height - theirs.height)).toBeLessThanOrEqual(3);
    expect(difference(ours, theirs)).toBeLessThan(SAME);
  });

  // Hebrew has no joining: unjoined, it is the same picture.
  it.each(indexed.filter(({ text }) => /[\u0600-\u06ff]/.test(text)))(
    'the picture of $text is not that of its letters unjoined',
    async ({ index }) => {
      const ours = await inkOfFirstLine(binders[index] as string, 1);
      expect(difference(ours, await inkOfFirstLine(unjoined, index + 1))).toBeGreaterThan(DIFFERENT);
    },
  );

  it.each(indexed)('the picture of $text is not that of it laid left to right', async ({ index }) => {
    const ours = await inkOfFirstLine(binders[index] as string, 1);
    expect(difference(ours, await inkOfFirstLine(reversed, index + 1))).toBeGreaterThan(DIFFERENT);
  });
});
