import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { CAPTION_HEIGHT } from '../../src/convert/pdf-binder.js';
import type { ConvertReport } from '../../src/convert/report.js';
import { expectedFrom, pageSizeOf, type ExpectedElement, type ExpectedPrototype } from './expected.js';
import { DROPPED_CHARACTERS, exportSample, withoutNonXml } from './helpers.js';
import { requireTool, tool } from './tools.js';

/** The PDF binders read back by poppler (pdfinfo, pdftotext, pdftoppm, pdfimages) and qpdf. */
const PDFINFO = requireTool('/usr/bin/pdfinfo', 'poppler-utils');
const PDFTOTEXT = requireTool('/usr/bin/pdftotext', 'poppler-utils');
const PDFTOPPM = requireTool('/usr/bin/pdftoppm', 'poppler-utils');
const PDFIMAGES = requireTool('/usr/bin/pdfimages', 'poppler-utils');
const QPDF = requireTool('/usr/bin/qpdf', 'qpdf');

/** Points of slack for text boxes: poppler measures glyphs, the element is a rectangle. */
const TOLERANCE = 2;

let dir: string;
let out: string;
let report: ConvertReport;
let expected: ExpectedPrototype[];

interface QpdfObject {
  value?: Record<string, unknown>;
}
interface QpdfJson {
  pages: { object: string; pageposfrom1: number }[];
  outlines: { title: string; dest: unknown[]; destpageposfrom1: number }[];
  qpdf: [unknown, Record<string, QpdfObject>];
}

const fileOf = (proto: ExpectedPrototype): string =>
  join(out, report.prototypes.find((p) => p.id === proto.id)?.file as string);

/** Label words with their box as pdftotext -bbox reports them (top-left origin, points). */
function wordsOf(bboxHtml: string): { xMin: number; yMin: number; xMax: number; yMax: number; text: string }[][] {
  const unescape = (s: string): string =>
    s
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, '&');
  return bboxHtml
    .split('<page ')
    .slice(1)
    .map((page) =>
      [...page.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)<\/word>/g)].map(
        (m) => ({
          xMin: Number(m[1]),
          yMin: Number(m[2]),
          xMax: Number(m[3]),
          yMax: Number(m[4]),
          text: unescape(m[5] as string),
        }),
      ),
    );
}

/**
 * A wireframe page: its size as convert grows it to hold every element, in PDF space from (0, 0),
 * and below that the caption strip with the page's number and name.
 */
function expectedPage(number: number, page: ExpectedPrototype['pages'][number]): RegExp {
  const { width, height } = pageSizeOf(page);
  return new RegExp(
    `Page +${number} size: +${width}(\\.0+)? x ${height + CAPTION_HEIGHT}(\\.0+)? pts[\\s\\S]*` +
      `Page +${number} MediaBox: +0\\.00 +-${CAPTION_HEIGHT}\\.00 +${width}\\.00 +${height}\\.00\n`,
  );
}

/**
 * pdfinfo's lines about each page from `first` to `last` (size, rotation, boxes), by page number:
 * one pdfinfo for all of them, not a process per page.
 */
async function pageLines(file: string, first: number, last: number): Promise<Map<number, string>> {
  const pages = new Map<number, string>();
  for (const line of (await tool(PDFINFO, ['-box', '-f', String(first), '-l', String(last), file])).split('\n')) {
    const number = /^Page +(\d+) /.exec(line)?.[1];
    if (number !== undefined) pages.set(Number(number), `${pages.get(Number(number)) ?? ''}${line}\n`);
  }
  return pages;
}

const labelled = (elements: ExpectedElement[]): ExpectedElement[] =>
  elements.filter((e) => typeof e.json.text === 'string' && e.json.text.trim() !== '');

describe('convert --to pdf, read back by poppler and qpdf', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-pdf-'));
    const archive = await exportSample(dir);
    expected = await expectedFrom(archive);
    out = join(dir, 'pdf');
    report = await convertArchive({ archive, out, to: 'pdf' });
  }, 120_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('writes one binder per prototype and a report', async () => {
    expect(report.to).toBe('pdf');
    expect(report.complete).toBe(true);
    // U+0001, U+FFFE and a lone surrogate are no text: left out of the labels, and counted.
    expect(report.prototypes.find((p) => p.id === '3')?.droppedCharacters).toBe(DROPPED_CHARACTERS);
    const files = (await readdir(out)).sort();
    expect(files).toEqual([...report.prototypes.map((p) => p.file as string), 'convert-report.json'].sort());
    for (const p of report.prototypes)
      expect(p.file).toMatch(new RegExp(`^${p.id}-[\\p{Ll}\\p{Lo}\\p{M}\\p{N}-]+\\.pdf$`, 'u'));
  });

  it('has a title page plus one page per wireframe page, the document info filled in', async () => {
    for (const proto of expected) {
      const info = await tool(PDFINFO, ['-enc', 'UTF-8', fileOf(proto)]);
      const field = (name: string): string | undefined => new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(info)?.[1]?.trim();
      expect(Number(field('Pages'))).toBe(1 + proto.pages.length);
      expect(field('Title')).toBe(proto.name);
      expect(field('Author')).toBe('rabbit-export');
      expect(field('Creator')).toBe('rabbit-export');
      expect(field('Producer')).toMatch(/^rabbit-export /);
      expect(field('Subject')).toContain(`prototype ${proto.id}, revision ${proto.revision}`);
      expect(field('Keywords')).toContain(`prototype ${proto.id}`);
      expect(field('ModDate')).toBeDefined();
      expect(field('CreationDate')).toBeDefined();
      const sizes = await pageLines(fileOf(proto), 2, 1 + proto.pages.length);
      for (const [index, page] of proto.pages.entries())
        expect(sizes.get(index + 2)).toMatch(expectedPage(index + 2, page));
    }
  });

  it('passes qpdf --check; bookmarks, links and notes point where they should', async () => {
    for (const proto of expected) {
      const file = fileOf(proto);
      const check = await tool(QPDF, ['--check', file]);
      expect(check).toContain('No syntax or stream encoding errors');
      const json = JSON.parse(await tool(QPDF, ['--json=2', file])) as QpdfJson;
      const pageObjects = json.pages.map((p) => p.object);
      expect(json.outlines.map((o) => o.title)).toEqual([
        `Title page: ${proto.name}`,
        ...proto.pages.map((p) => p.name),
      ]);
      expect(json.outlines.map((o) => o.destpageposfrom1)).toEqual(pageObjects.map((_, i) => i + 1));
      const objects = json.qpdf[1];
      const valueOf = (ref: string): Record<string, unknown> => objects[`obj:${ref}`]?.value ?? {};
      for (const [index, page] of proto.pages.entries()) {
        const pageObject = valueOf(pageObjects[index + 1] as string);
        const annots = ((pageObject['/Annots'] ?? []) as string[]).map(valueOf);
        const pageIds = proto.pages.map((p) => p.id);
        const targets = [...page.layers.flatMap((l) => l.elements), ...page.elements].filter(
          (e) => typeof e.json.target === 'string' && pageIds.includes(e.json.target),
        );
        const links = annots.filter((a) => a['/Subtype'] === '/Link');
        expect(links.length).toBe(targets.length);
        const { height } = pageSizeOf(page);
        for (const element of targets) {
          const link = links.find((l) => l['/NM'] === `u:link-${element.id}`);
          expect(link, `link of ${element.id}`).toBeDefined();
          const dest = link?.['/Dest'] as unknown[];
          expect(dest[0]).toBe(pageObjects[pageIds.indexOf(element.json.target as string) + 1]);
          const { x, y } = element.json.position as { x: number; y: number };
          const { width: w, height: h } = element.json.dimensions as { width: number; height: number };
          expect(link?.['/Rect']).toEqual([x, height - y - h, x + w, height - y]);
        }
        const notes = annots.filter((a) => a['/Subtype'] === '/Text');
        expect(notes.length).toBe(page.discussions.length);
        for (const discussion of page.discussions) {
          const note = notes.find((n) => n['/NM'] === `u:discussion-${String(discussion.id)}`);
          expect(note, `note of discussion ${String(discussion.id)}`).toBeDefined();
          const contents = String(note?.['/Contents']);
          for (const entry of discussion.entries as { author: string; text: string; timestamp: number }[]) {
            expect(contents).toContain(entry.author);
            expect(contents).toContain(entry.text);
            expect(contents).toContain(new Date(entry.timestamp).toISOString().slice(0, 10));
          }
        }
      }
    }
  });

  it('pdftotext finds every label, exactly, inside its element on its page', async () => {
    let checked = 0;
    for (const proto of expected) {
      const pages = wordsOf(await tool(PDFTOTEXT, ['-bbox', '-enc', 'UTF-8', fileOf(proto), '-']));
      expect(pages.length).toBe(1 + proto.pages.length);
      // The name may wrap at a space: its pieces are one line each.
      expect(pages[0]?.map((w) => w.text).join(' ')).toContain(proto.name);
      for (const [index, page] of proto.pages.entries()) {
        const words = pages[index + 1] ?? [];
        for (const element of labelled([...page.layers.flatMap((l) => l.elements), ...page.elements])) {
          const { x, y } = element.json.position as { x: number; y: number };
          const { width, height } = element.json.dimensions as { width: number; height: number };
          const lines = withoutNonXml(element.json.text as string)
            .split(/\r\n|\r|\n/)
            .filter((line) => line.trim() !== '');
          for (const line of lines) {
            const word = words.find(
              (w) =>
                w.text.trim() === line.trim() &&
                w.xMin >= x - TOLERANCE &&
                w.yMin >= y - TOLERANCE &&
                w.xMax <= x + width + TOLERANCE &&
                w.yMax <= y + height + TOLERANCE,
            );
            expect(word, `"${line}" of ${element.id} on ${page.id} inside ${x},${y} ${width}x${height}`).toBeDefined();
            checked++;
          }
        }
      }
    }
    // CJK, emoji and XML-hostile characters included (the sample's extra elements).
    expect(checked).toBeGreaterThan(10);
  });

  it('pdftoppm renders every page, and the renderings are embedded losslessly at their size', async () => {
    for (const proto of expected) {
      const prefix = join(dir, `render-${proto.id}`);
      await tool(PDFTOPPM, ['-r', '36', '-png', fileOf(proto), prefix]);
      const rendered = (await readdir(dir)).filter((name) => name.startsWith(`render-${proto.id}-`));
      expect(rendered.length).toBe(1 + proto.pages.length);
      for (const name of rendered) expect((await readFile(join(dir, name))).length).toBeGreaterThan(100);
      const list = (await tool(PDFIMAGES, ['-list', fileOf(proto)])).split('\n').slice(2).filter(Boolean);
      const images = list.map((line) => line.trim().split(/\s+/)).filter((cols) => cols[2] === 'image');
      expect(images.length).toBe(proto.pages.length);
      for (const [index, page] of proto.pages.entries()) {
        const cols = images[index] as string[];
        expect(Number(cols[0])).toBe(index + 2);
        expect([Number(cols[3]), Number(cols[4])]).toEqual([page.png.readUInt32BE(16), page.png.readUInt32BE(20)]);
        // "image" is Flate (or raw) data: the pixels as they were, never re-compressed as JPEG.
        expect(cols[8]).toBe('image');
      }
    }
  });
  it('--no-rendering leaves the images out and keeps each page at its rendering size', async () => {
    const bare = join(dir, 'bare');
    const archive = join(dir, 'archive.zip');
    const result = await convertArchive({ archive, out: bare, to: 'pdf', rendering: false, prototypes: ['42'] });
    expect(result.rendering).toBe(false);
    const file = join(bare, result.prototypes[0]?.file as string);
    await tool(QPDF, ['--check', file]);
    expect((await tool(PDFIMAGES, ['-list', file])).split('\n').slice(2).filter(Boolean)).toEqual([]);
    const proto = expected.find((p) => p.id === '42') as ExpectedPrototype;
    const sizes = await pageLines(file, 2, 1 + proto.pages.length);
    for (const [index, page] of proto.pages.entries())
      expect(sizes.get(index + 2)).toMatch(expectedPage(index + 2, page));
  });
});
