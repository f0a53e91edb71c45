import PDFDocument, { type PdfReference } from 'pdfkit';
import { TOOL_NAME, TOOL_VERSION } from '../core/version.js';
import { type PageContent, type PagePlan, type PrototypeHead, discussionLines, textSource } from './page-walk.js';
import { PdfFonts } from './pdf/pdf-fonts.js';
import { fitLines, titlePages } from './pdf/pdf-text.js';
import { systemFonts, type FontFaces } from './pdf/system-fonts.js';
import type { ElementData } from './prototype-data.js';
import type { XmlText } from './xml-text.js';

/**
 * One PDF per prototype (the "binder"): a title page, then one PDF page per wireframe page with
 * its rendering at its pixel size taken as points (72 dpi), the PNG's pixels embedded as they are
 * (pdfkit passes a PNG's compressed data through, or re-deflates it when it splits off an alpha
 * channel), each element's label as invisible text at its place, page links as GoTo link
 * annotations, discussions as sticky notes, and a bookmark per page. The page box takes in every
 * element, off the rendering or not, and a caption strip with the page's number and name.
 *
 * pdfkit writes each page out as the next begins, so memory follows the biggest page, not the
 * prototype; text draws with the bundled DejaVu Sans, then the system's fonts (pdf/pdf-fonts.ts),
 * embedded as subsets. Readers search, copy and extract the exact Unicode text, even where a
 * character had no font (pdf/pdf-text.ts says how). Characters that are no text at all (C0
 * controls, U+FFFE/U+FFFF, lone surrogates) are left out by XML's rule and counted in `text`, once
 * per text they come from (xml-text.ts).
 */

export interface BinderStats {
  pages: number;
  labels: number;
  links: number;
  discussions: number;
  danglingTargets: { pageId: string; elementId: string; target: string }[];
  /** Characters no available font has, drawn as `?` (their text stays whole for readers). */
  replacedCharacters: number;
  /** Those characters one by one, in the order first met, with how often each was replaced. */
  missingCharacters: { character: string; count: number }[];
  /** Bytes of the PNGs embedded, to weigh the binder against. */
  renderingBytes: number;
  /** The font faces embedded (as subsets). */
  fonts: string[];
}

export interface BinderOptions {
  /** The machine's fonts, tried after the bundled one; by default those fontconfig offers. */
  fonts?: FontFaces;
}

/**
 * The binder as it is written, chunk by chunk: `stats` is complete once `chunks` is exhausted.
 * Pages are read from `pages` only as the chunks are asked for.
 */
export function pdfBinderChunks(
  head: PrototypeHead,
  plan: PagePlan,
  pages: AsyncIterable<PageContent>,
  text: XmlText,
  options: BinderOptions = {},
): { chunks: AsyncIterable<Uint8Array>; stats: BinderStats } {
  const stats: BinderStats = {
    pages: 0,
    labels: 0,
    links: 0,
    discussions: 0,
    danglingTargets: [],
    replacedCharacters: 0,
    missingCharacters: [],
    renderingBytes: 0,
    fonts: [],
  };
  return { chunks: binderChunks(head, plan, pages, text, options, stats), stats };
}

/** The whole binder in memory: for small ones and tests; convert writes pdfBinderChunks' chunks. */
export async function pdfBinder(
  head: PrototypeHead,
  plan: PagePlan,
  pages: AsyncIterable<PageContent>,
  text: XmlText,
  options: BinderOptions = {},
): Promise<{ bytes: Uint8Array; stats: BinderStats }> {
  const { chunks, stats } = pdfBinderChunks(head, plan, pages, text, options);
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return { bytes: Buffer.concat(parts), stats };
}

/** The prototype's name is on the title page and its bookmark. */
const PROTOTYPE_NAME = 'prototype name';

async function* binderChunks(
  head: PrototypeHead,
  plan: PagePlan,
  pages: AsyncIterable<PageContent>,
  text: XmlText,
  options: BinderOptions,
  stats: BinderStats,
): AsyncGenerator<Uint8Array> {
  // No default font: a binder draws with the faces PdfFonts picks, never a standard PDF font.
  const doc = new PDFDocument({
    autoFirstPage: false,
    compress: true,
    displayTitle: true,
    pdfVersion: '1.7',
    font: null,
  });
  const output = collect(doc);
  const fonts = new PdfFonts(doc, options.fonts ?? (await systemFonts()));
  setInfo(doc, head, text);

  titlePages(doc, fonts, head, plan, text, PROTOTYPE_NAME);
  doc.outline.addItem(text.clean(`Title page: ${head.name ?? `prototype ${head.id}`}`, PROTOTYPE_NAME));
  yield* output.take();

  const pageRefs = new Map<string, PdfReference>();
  const links: { annotation: PdfReference; target: string }[] = [];
  for await (const content of pages) {
    wireframePage(doc, fonts, content, plan, links, stats, text);
    pageRefs.set(content.page.id, doc.page.dictionary);
    doc.outline.addItem(text.clean(content.page.name, textSource.page(content.page)));
    stats.pages++;
    yield* output.take();
  }
  // Links point at pages further on, so their destinations are filled in once every page exists.
  for (const { annotation, target } of links) {
    annotation.data.Dest = [pageRefs.get(target), 'XYZ', null, null, null];
    annotation.end();
    stats.links++;
  }
  for (const [character, count] of fonts.missing) {
    stats.missingCharacters.push({ character, count });
    stats.replacedCharacters += count;
  }
  stats.fonts = fonts.used;
  doc.end();
  await output.finished;
  yield* output.take();
}

/** The document's output as it is written, taken a page at a time. */
function collect(doc: PDFDocument): { take(): Uint8Array[]; finished: Promise<void> } {
  let pending: Uint8Array[] = [];
  doc.on('data', (chunk) => pending.push(chunk));
  const finished = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  return {
    take() {
      const out = pending;
      pending = [];
      return out;
    },
    finished,
  };
}

function wireframePage(
  doc: PDFDocument,
  fonts: PdfFonts,
  content: PageContent,
  plan: PagePlan,
  links: { annotation: PdfReference; target: string }[],
  stats: BinderStats,
  text: XmlText,
): void {
  const { width, height } = content.size;
  const elements = [...content.layers.flatMap((layer) => layer.elements), ...content.elements];
  // pdfkit's coordinates start at the top left of the page (grown to hold every element, page-walk.ts);
  // the caption strip lies below it, so that PDF space keeps the page's own coordinates.
  doc.addPage({ size: [width, height], margin: 0 });
  doc.page.dictionary.data.MediaBox = [0, -CAPTION_HEIGHT, width, height];
  if (content.png !== undefined) {
    const canvas = content.canvas ?? { x: 0, y: 0, width, height };
    doc.image(content.png, canvas.x, canvas.y, { width: canvas.width, height: canvas.height });
    stats.renderingBytes += content.png.length;
  }
  const name = text.clean(content.page.name, textSource.page(content.page));
  const caption = `${content.number} / ${plan.pages.length}   ${name}`;
  fitLines(doc, fonts, [caption], { x: 4, y: height + 4, width: width - 8, height: CAPTION_HEIGHT - 8 }, 10, {
    visible: true,
    source: textSource.page(content.page),
  });

  for (const element of elements) {
    if (element.text !== null && element.text.trim() !== '') {
      const label = text.clean(element.text, textSource.element(element, 'text'));
      const lines = label.split(/\r\n|\r|\n/).filter((line) => line.trim() !== '');
      const { x: bx, y: by, width: bw, height: bh } = element.box;
      fitLines(doc, fonts, lines, { x: bx + 1, y: by, width: bw - 2, height: bh }, 24, {
        visible: false,
        source: textSource.element(element, 'text'),
      });
      stats.labels++;
    }
    if (element.target === null) continue;
    if (plan.pageIds.has(element.target))
      links.push({ annotation: linkAnnotation(doc, element, height), target: element.target });
    else stats.danglingTargets.push({ pageId: content.page.id, elementId: element.id, target: element.target });
  }

  for (const discussion of content.discussions) {
    const nx = Math.min(Math.max(discussion.x, 0), Math.max(width - NOTE_ICON, 0));
    const top = height - Math.min(Math.max(discussion.y, 0), Math.max(height - NOTE_ICON, 0));
    const last = discussion.entries.at(-1)?.timestamp ?? null;
    // The title is the first line: cleaned once, for both.
    const lines = discussionLines(discussion).map((line) => text.clean(line));
    const note = doc.ref({
      Type: 'Annot',
      Subtype: 'Text',
      Rect: [nx, top - NOTE_ICON, nx + NOTE_ICON, top],
      Name: 'Comment',
      Open: false,
      F: 4,
      C: [1, 0.82, 0.2],
      T: new String(lines[0] ?? ''),
      Contents: new String(lines.join('\n')),
      NM: new String(`discussion-${discussion.id}`),
      ...(last !== null && Number.isFinite(new Date(last).getTime()) ? { M: new Date(last) } : {}),
    });
    note.end();
    doc.page.annotations.push(note);
    stats.discussions++;
  }
}

const NOTE_ICON = 20;
/** The strip below each wireframe page with its number and name, outside the page and its rendering. */
export const CAPTION_HEIGHT = 24;

/** A link's rectangle in PDF space, where the rendering's top left is (0, its height). */
function linkAnnotation(doc: PDFDocument, element: ElementData, pageHeight: number): PdfReference {
  const { x, y, width, height } = element.box;
  const link = doc.ref({
    Type: 'Annot',
    Subtype: 'Link',
    Rect: [x, pageHeight - y - height, x + width, pageHeight - y],
    Border: [0, 0, 0],
    F: 4,
    NM: new String(`link-${element.id}`),
  });
  doc.page.annotations.push(link);
  return link;
}

function setInfo(doc: PDFDocument, head: PrototypeHead, text: XmlText): void {
  const name = text.clean(head.name ?? `Prototype ${head.id}`);
  const created = head.milestones.map((m) => m.created).find((t) => t !== null) ?? head.lastModification;
  const dateOf = (time: number | null): Date | undefined => {
    const date = time === null ? undefined : new Date(time);
    return date !== undefined && Number.isFinite(date.getTime()) ? date : undefined;
  };
  Object.assign(doc.info, {
    Title: name,
    Author: TOOL_NAME,
    Creator: TOOL_NAME,
    Producer: `${TOOL_NAME} ${TOOL_VERSION}`,
    Subject: `Wireframes of prototype ${head.id}, revision ${head.revision}, as archived by ${TOOL_NAME}`,
    Keywords: [TOOL_NAME, 'wireframe', `prototype ${head.id}`, `revision ${head.revision}`].join(' '),
  });
  // The prototype's own dates where the archive holds them (pdfkit's default creation date, now, else).
  const creation = dateOf(created);
  const modification = dateOf(head.lastModification);
  if (creation !== undefined) doc.info.CreationDate = creation;
  if (modification !== undefined) doc.info.ModDate = modification;
}
