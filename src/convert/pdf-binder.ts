import {
  beginText,
  endMarkedContent,
  endText,
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNull,
  PDFNumber,
  PDFOperator,
  PDFOperatorNames,
  PDFString,
  setFontAndSize,
  setTextMatrix,
  setTextRenderingMode,
  showText,
  StandardFonts,
  TextRenderingMode,
  type PDFFont,
  type PDFPage,
  type PDFRef,
} from 'pdf-lib';
import { TOOL_NAME, TOOL_VERSION } from '../core/version.js';
import {
  dateOf,
  discussionLines,
  textSource,
  type PageContent,
  type PagePlan,
  type PrototypeHead,
} from './page-walk.js';
import type { ElementData } from './prototype-data.js';
import type { XmlText } from './xml-text.js';

/**
 * One PDF per prototype (the "binder"): a title page, then one PDF page per wireframe page at its
 * rendering's pixel size taken as points (72 dpi), the PNG embedded as it is (pdf-lib decodes it
 * and stores the same pixels deflated), each element's label as invisible text at its place,
 * page links as GoTo link annotations, discussions as sticky notes, and a bookmark per page.
 *
 * Text and fonts: the 14 standard PDF fonts only encode WinAnsi, and no well-kept npm package
 * ships a font that covers CJK and emoji at a size worth embedding in every binder. So the glyphs
 * drawn are a WinAnsi transliteration (accents dropped by NFKD, anything else `?`), and every run
 * of text is wrapped in a marked-content span whose /ActualText is the exact Unicode text: that is
 * what PDF readers search, copy and extract (poppler's pdftotext reads it). Bookmarks, notes and
 * the document info are PDF text strings (UTF-16), which hold any character. Characters that are no
 * text at all (C0 controls, U+FFFE/U+FFFF, lone surrogates) are left out by XML's rule and counted
 * in `text`, once per text they come from (xml-text.ts).
 */

export interface BinderStats {
  pages: number;
  labels: number;
  links: number;
  discussions: number;
  danglingTargets: { pageId: string; elementId: string; target: string }[];
}

/** Links point at pages further on, so they are added once every page exists. */
export async function pdfBinder(
  head: PrototypeHead,
  plan: PagePlan,
  pages: AsyncIterable<PageContent>,
  text: XmlText,
): Promise<{ bytes: Uint8Array; stats: BinderStats }> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const fonts = {
    regular: await doc.embedFont(StandardFonts.Helvetica),
    bold: await doc.embedFont(StandardFonts.HelveticaBold),
  };
  const encodable = new Set(fonts.regular.getCharacterSet());
  const stats: BinderStats = { pages: 0, labels: 0, links: 0, discussions: 0, danglingTargets: [] };

  const titlePages = titlePagesOf(doc, head, plan, fonts, encodable, text);
  const outline: { title: string; ref: PDFRef }[] = [
    {
      title: text.clean(`Title page: ${head.name ?? `prototype ${head.id}`}`, PROTOTYPE_NAME),
      ref: (titlePages[0] as PDFPage).ref,
    },
  ];
  const pageRefs = new Map<string, PDFRef>();
  const links: PendingLink[] = [];
  for await (const content of pages) {
    const page = await wireframePage(doc, content, fonts.regular, encodable, plan.pageIds, links, stats, text);
    pageRefs.set(content.page.id, page.ref);
    outline.push({ title: text.clean(content.page.name, textSource.page(content.page)), ref: page.ref });
    stats.pages++;
  }
  for (const link of links) {
    const target = pageRefs.get(link.element.target as string) as PDFRef;
    link.page.node.addAnnot(doc.context.register(linkAnnotation(doc, link.element, link.page.getHeight(), target)));
    stats.links++;
  }

  addOutline(doc, outline);
  setInfo(doc, head);
  return { bytes: await doc.save(), stats };
}

/** The prototype's name is on the title page and its bookmark. */
const PROTOTYPE_NAME = 'prototype name';

interface PendingLink {
  page: PDFPage;
  element: ElementData;
}

async function wireframePage(
  doc: PDFDocument,
  content: PageContent,
  font: PDFFont,
  encodable: ReadonlySet<number>,
  pageIds: ReadonlySet<string>,
  links: PendingLink[],
  stats: BinderStats,
  text: XmlText,
): Promise<PDFPage> {
  const { width, height } = content.size;
  const page = doc.addPage([width, height]);
  if (content.png !== undefined) {
    const image = await doc.embedPng(content.png);
    // Where the service's page sits on the page grown to hold every label (page-walk.ts).
    const box = content.canvas ?? { x: 0, y: 0, width, height };
    page.drawImage(image, { x: box.x, y: height - box.y - box.height, width: box.width, height: box.height });
  }
  const fontKey = page.node.newFontDictionary('F', font.ref);
  const annots: PDFRef[] = [];
  const elements = [...content.layers.flatMap((layer) => layer.elements), ...content.elements];
  for (const element of elements) {
    if (element.text !== null && element.text.trim() !== '') {
      const label = text.clean(element.text, textSource.element(element, 'text'));
      invisibleLabel(doc, page, { fontKey, font, encodable }, label, element.box, height);
      stats.labels++;
    }
    if (element.target === null) continue;
    if (pageIds.has(element.target)) links.push({ page, element });
    else stats.danglingTargets.push({ pageId: content.page.id, elementId: element.id, target: element.target });
  }
  for (const discussion of content.discussions) {
    const x = Math.min(Math.max(discussion.x, 0), Math.max(width - NOTE_ICON, 0));
    const top = height - Math.min(Math.max(discussion.y, 0), Math.max(height - NOTE_ICON, 0));
    const last = discussion.entries.at(-1)?.timestamp ?? null;
    const note = doc.context.obj({
      Type: 'Annot',
      Subtype: 'Text',
      Rect: [x, top - NOTE_ICON, x + NOTE_ICON, top],
      Name: 'Comment',
      Open: false,
      F: 4,
      C: [1, 0.82, 0.2],
    });
    // The title is the first line: cleaned once, for both.
    const lines = discussionLines(discussion).map((line) => text.clean(line));
    note.set(PDFName.of('T'), PDFHexString.fromText(lines[0] ?? ''));
    note.set(PDFName.of('Contents'), PDFHexString.fromText(lines.join('\n')));
    note.set(PDFName.of('NM'), PDFHexString.fromText(`discussion-${discussion.id}`));
    if (last !== null) note.set(PDFName.of('M'), PDFString.fromDate(new Date(last)));
    annots.push(doc.context.register(note));
    stats.discussions++;
  }
  for (const annot of annots) page.node.addAnnot(annot);
  return page;
}

const NOTE_ICON = 20;

/** Each line of the label, sized to fit the element's box, in text render mode 3 (invisible). */
function invisibleLabel(
  doc: PDFDocument,
  page: PDFPage,
  textFont: TextFont,
  text: string,
  box: ElementData['box'],
  pageHeight: number,
): void {
  const { font, encodable } = textFont;
  const lines = text.split(/\r\n|\r|\n/).filter((line) => line.trim() !== '');
  const widest = Math.max(...lines.map((line) => font.widthOfTextAtSize(winAnsiOf(line, encodable), 1)), 1);
  const size = Math.max(1, Math.min(box.height / lines.length / 1.2, (box.width - 2) / widest, 24));
  for (const [index, line] of lines.entries()) {
    const baseline = pageHeight - box.y - size * (index * 1.2 + 0.95);
    textRun(doc, page, textFont, line, box.x + 1, baseline, size, false);
  }
}

interface TextFont {
  fontKey: PDFName;
  font: PDFFont;
  encodable: ReadonlySet<number>;
}

/** One line of text, its glyphs WinAnsi, its meaning the exact text (/ActualText). */
function textRun(
  doc: PDFDocument,
  page: PDFPage,
  { fontKey, font, encodable }: TextFont,
  text: string,
  x: number,
  baseline: number,
  size: number,
  visible: boolean,
): void {
  const properties = PDFDict.withContext(doc.context);
  properties.set(PDFName.of('ActualText'), PDFHexString.fromText(text));
  page.pushOperators(
    // An inline property list: pdf-lib's operand type leaves dictionaries out, but writes one
    // like any other object (readers honour /ActualText only inline or in /Properties).
    PDFOperator.of(PDFOperatorNames.BeginMarkedContentSequence, [
      PDFName.of('Span'),
      properties as unknown as PDFArray,
    ]),
    beginText(),
    setFontAndSize(fontKey, size),
    setTextRenderingMode(visible ? TextRenderingMode.Fill : TextRenderingMode.Invisible),
    setTextMatrix(1, 0, 0, 1, x, baseline),
    showText(font.encodeText(winAnsiOf(text, encodable))),
    endText(),
    endMarkedContent(),
  );
}

/** What the standard fonts can draw of a text: accents dropped where that helps, else `?`. */
export function winAnsiOf(text: string, encodable: ReadonlySet<number>): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (encodable.has(code)) {
      out += char;
      continue;
    }
    const base = char.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
    out += base !== '' && [...base].every((c) => encodable.has(c.codePointAt(0) as number)) ? base : '?';
  }
  return out;
}

function linkAnnotation(doc: PDFDocument, element: ElementData, pageHeight: number, target: PDFRef): PDFDict {
  const { x, y, width, height } = element.box;
  const link = doc.context.obj({
    Type: 'Annot',
    Subtype: 'Link',
    Rect: [x, pageHeight - y - height, x + width, pageHeight - y],
    Border: [0, 0, 0],
    F: 4,
  });
  link.set(PDFName.of('Dest'), destination(doc, target));
  link.set(PDFName.of('NM'), PDFHexString.fromText(`link-${element.id}`));
  return link;
}

/** The top-left corner of the page at the reader's zoom. */
function destination(doc: PDFDocument, page: PDFRef): PDFArray {
  const dest = PDFArray.withContext(doc.context);
  dest.push(page);
  dest.push(PDFName.of('XYZ'));
  dest.push(PDFNull);
  dest.push(PDFNull);
  dest.push(PDFNull);
  return dest;
}

/** The Outlines dictionary: one flat list of entries, in page order. */
function addOutline(doc: PDFDocument, entries: readonly { title: string; ref: PDFRef }[]): void {
  const rootRef = doc.context.nextRef();
  const refs = entries.map(() => doc.context.nextRef());
  for (const [index, entry] of entries.entries()) {
    const item = PDFDict.withContext(doc.context);
    item.set(PDFName.of('Title'), PDFHexString.fromText(entry.title));
    item.set(PDFName.of('Parent'), rootRef);
    item.set(PDFName.of('Dest'), destination(doc, entry.ref));
    if (index > 0) item.set(PDFName.of('Prev'), refs[index - 1] as PDFRef);
    if (index < refs.length - 1) item.set(PDFName.of('Next'), refs[index + 1] as PDFRef);
    doc.context.assign(refs[index] as PDFRef, item);
  }
  const root = PDFDict.withContext(doc.context);
  root.set(PDFName.of('Type'), PDFName.of('Outlines'));
  root.set(PDFName.of('First'), refs[0] as PDFRef);
  root.set(PDFName.of('Last'), refs[refs.length - 1] as PDFRef);
  root.set(PDFName.of('Count'), PDFNumber.of(refs.length));
  doc.context.assign(rootRef, root);
  doc.catalog.set(PDFName.of('Outlines'), rootRef);
  doc.catalog.set(PDFName.of('PageMode'), PDFName.of('UseOutlines'));
}

function setInfo(doc: PDFDocument, head: PrototypeHead): void {
  const name = head.name ?? `Prototype ${head.id}`;
  doc.setTitle(name, { showInWindowTitleBar: true });
  doc.setAuthor(TOOL_NAME);
  doc.setCreator(TOOL_NAME);
  doc.setProducer(`${TOOL_NAME} ${TOOL_VERSION}`);
  doc.setSubject(`Wireframes of prototype ${head.id}, revision ${head.revision}, as archived by ${TOOL_NAME}`);
  doc.setKeywords([TOOL_NAME, 'wireframe', `prototype ${head.id}`, `revision ${head.revision}`]);
  const created = head.milestones.map((m) => m.created).find((t) => t !== null) ?? head.lastModification;
  if (created !== null) doc.setCreationDate(new Date(created));
  if (head.lastModification !== null) doc.setModificationDate(new Date(head.lastModification));
}

const A4 = { width: 595.28, height: 841.89 };
const MARGIN = 56;

/** The title page (and its continuations, for a long history): name, revision, dates, milestones, pages. */
function titlePagesOf(
  doc: PDFDocument,
  head: PrototypeHead,
  plan: PagePlan,
  fonts: { regular: PDFFont; bold: PDFFont },
  encodable: ReadonlySet<number>,
  text: XmlText,
): PDFPage[] {
  const lines: { text: string; size: number; bold?: boolean; gap?: number; source?: string }[] = [
    { text: head.name ?? `Prototype ${head.id}`, size: 22, bold: true, source: PROTOTYPE_NAME },
    { text: `Prototype ${head.id}, revision ${head.revision}`, size: 12, gap: 6 },
    {
      text: `Last modified ${dateOf(head.lastModification)}${head.lastUser !== null ? ` by ${head.lastUser}` : ''}`,
      size: 12,
    },
    { text: `${plan.pages.length} page${plan.pages.length === 1 ? '' : 's'}`, size: 12 },
    { text: 'Milestones', size: 14, bold: true, gap: 18 },
  ];
  if (head.milestones.length === 0) lines.push({ text: 'none saved', size: 11 });
  for (const m of head.milestones) {
    lines.push({
      text: `r${m.revision}  ${dateOf(m.created)}  ${m.name}${m.user !== '' ? ` (${m.user})` : ''}`,
      size: 11,
    });
  }
  lines.push({ text: 'Pages', size: 14, bold: true, gap: 18 });
  for (const [index, page] of plan.pages.entries()) {
    lines.push({ text: `${index + 1}. ${page.name}`, size: 11, source: textSource.page(page) });
  }

  const pages: PDFPage[] = [];
  let page: PDFPage | undefined;
  let keys: { regular: PDFName; bold: PDFName } | undefined;
  let y = 0;
  for (const line of lines) {
    const step = line.size * 1.35 + (line.gap ?? 0);
    if (page === undefined || keys === undefined || y - step < MARGIN) {
      page = doc.addPage([A4.width, A4.height]);
      keys = {
        regular: page.node.newFontDictionary('F', fonts.regular.ref),
        bold: page.node.newFontDictionary('FB', fonts.bold.ref),
      };
      pages.push(page);
      y = A4.height - MARGIN;
    }
    y -= step;
    const font = line.bold ? fonts.bold : fonts.regular;
    const fontKey = line.bold ? keys.bold : keys.regular;
    const clean = text.clean(line.text, line.source);
    for (const [index, piece] of wrap(clean, font, line.size, A4.width - 2 * MARGIN, encodable).entries()) {
      if (index > 0) y -= line.size * 1.25;
      textRun(doc, page, { fontKey, font, encodable }, piece, MARGIN, y, line.size, true);
    }
  }
  return pages;
}

/** Splits at spaces so that each piece fits the width (a long word alone stays whole). */
function wrap(text: string, font: PDFFont, size: number, width: number, encodable: ReadonlySet<number>): string[] {
  const out: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    const next = current === '' ? word : `${current} ${word}`;
    if (current !== '' && font.widthOfTextAtSize(winAnsiOf(next, encodable), size) > width) {
      out.push(current);
      current = word;
    } else {
      current = next;
    }
  }
  out.push(current);
  return out;
}
