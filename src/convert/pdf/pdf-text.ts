import type PDFDocument from 'pdfkit';
import { dateOf, textSource, type PagePlan, type PrototypeHead } from '../page-walk.js';
import type { XmlText } from '../xml-text.js';
import type { PdfFonts } from './pdf-fonts.js';

type Cut = ReturnType<PdfFonts['runs']>;

interface LineStyle {
  visible: boolean;
  bold?: boolean;
  /** Where the text comes from, so that what it loses is counted once (see XmlText). */
  source?: string | undefined;
}

/**
 * Lines set inside a box (page coordinates, y down), at the biggest size up to `maxSize` at which
 * the widest fits its width and all of them its height. Line height is the fonts' own ascent to
 * descent, so each line's glyphs stay inside the box as a text extractor measures them.
 */
export function fitLines(
  doc: PDFDocument,
  fonts: PdfFonts,
  lines: readonly string[],
  box: { x: number; y: number; width: number; height: number },
  maxSize: number,
  style: LineStyle,
): void {
  if (lines.length === 0) return;
  const missing: string[] = [];
  let ascent = 0;
  let descent = 0;
  let widest = 0;
  const laid = lines.map((line) => {
    const cut = fonts.runs(line, style.bold ?? false);
    missing.push(...cut.missing);
    let width = 0;
    for (const run of cut.runs) {
      const metrics = fonts.use(run.font, 1);
      ascent = Math.max(ascent, metrics.ascent);
      descent = Math.min(descent, metrics.descent);
      width += fonts.width(run, 1);
    }
    widest = Math.max(widest, width);
    return { line, cut };
  });
  fonts.count(missing, style.source);
  const step = Math.max(ascent - descent, 0.5);
  const size = Math.max(1, Math.min(box.height / lines.length / step, box.width / Math.max(widest, 0.01), maxSize));
  for (const [index, { line, cut }] of laid.entries()) {
    drawLine(doc, fonts, line, cut, box.x, box.y + size * (index * step + ascent), size, style.visible);
  }
}

/**
 * One line at a baseline, its runs one after the other. Invisible text is render mode 3: there to
 * be found, drawn over a rendering that already shows it. What readers extract, search and copy:
 *
 * - a line without right-to-left text is one marked-content span whose /ActualText is the line's
 *   exact text (`?` or not, joiners and all);
 * - a line with right-to-left text is read from its glyphs, which lie in visual order as browsers
 *   write them, each mapped to its characters by its font's ToUnicode map; readers (poppler,
 *   pdf.js) put them back in logical order. Only a replacement `?` has a span, with the character
 *   it stands for. A span over the whole line would not do: poppler spreads an /ActualText's
 *   characters left to right across the span's glyphs, so logical order would read back reversed.
 */
export function drawLine(
  doc: PDFDocument,
  fonts: PdfFonts,
  line: string,
  cut: Cut,
  x: number,
  baseline: number,
  size: number,
  visible: boolean,
): void {
  const whole = !cut.rightToLeft;
  const ops: string[] = [];
  if (whole) ops.push(actualText(line));
  ops.push('BT', visible ? '0 Tr' : '3 Tr');
  let at = x;
  for (const run of cut.runs) {
    const span = !whole && run.actual !== undefined;
    if (span) ops.push(actualText(run.actual as string));
    at = drawRun(ops, fonts, run, at, baseline, size, !whole);
    if (span) ops.push('EMC');
  }
  ops.push('ET');
  if (whole) ops.push('EMC');
  doc.addContent(ops.join('\n'));
}

/**
 * The operators of one run, which starts at `x`; returns where the next one starts. In a line read
 * from its glyphs, a ligature of a right-to-left run (Arabic's lam-alef) has a span with its
 * characters in visual order, as the glyphs around it are: readers reverse the line as a whole,
 * the ligature's own characters with it, and its ToUnicode entry, in logical order, would read
 * back reversed (as Chromium's print-to-PDF of "السلام" reads back "السالم" in pdftotext).
 */
function drawRun(
  ops: string[],
  fonts: PdfFonts,
  run: Cut['runs'][number],
  x: number,
  baseline: number,
  size: number,
  fromGlyphs: boolean,
): number {
  let at = x;
  const scale = size / 1000;
  const reversed = fromGlyphs && run.level % 2 === 1;
  const { id, glyphs, positions, characters = [] } = fonts.shape(run, size, reversed);
  ops.push(`/${id} ${num(size)} Tf`);
  // The page's coordinates run down from its top: the text matrix turns glyphs upright again.
  const move = (dx: number, dy: number): string => `1 0 0 -1 ${num(at + dx * scale)} ${num(baseline - dy * scale)} Tm`;
  ops.push(move(0, 0));
  // Glyphs run together in one string until an adjustment (kerning, shaping) comes between.
  let pending: string[] = [];
  let hex = '';
  const flush = (): void => {
    if (hex !== '') pending.push(`<${hex}>`);
    if (pending.length > 0) ops.push(`[${pending.join(' ')}] TJ`);
    pending = [];
    hex = '';
  };
  for (const [index, position] of positions.entries()) {
    const glyph = glyphs[index] ?? '';
    const ligature = [...(characters[index] ?? '')];
    const span = reversed && ligature.length > 1;
    if (span) {
      flush();
      ops.push(actualText(ligature.reverse().join('')));
    }
    if (position.xOffset !== 0 || position.yOffset !== 0) {
      flush();
      ops.push(move(position.xOffset, position.yOffset), `[<${glyph}>] TJ`);
      at += position.xAdvance * scale;
      ops.push(move(0, 0));
    } else {
      hex += glyph;
      const adjust = position.xAdvance - position.advanceWidth;
      if (adjust !== 0) {
        pending.push(`<${hex}>`, num(-adjust));
        hex = '';
      }
      at += position.xAdvance * scale;
    }
    if (span) {
      flush();
      ops.push('EMC');
    }
  }
  flush();
  return at;
}

/** A marked-content span whose text is `text` for whatever it draws. */
function actualText(text: string): string {
  return `/Span <</ActualText <${utf16Hex(text)}>>> BDC`;
}

function num(value: number): string {
  return String(Math.round(value * 1e4) / 1e4);
}

/** A PDF text string: UTF-16BE with its byte-order mark, as hex. */
function utf16Hex(text: string): string {
  let hex = 'FEFF';
  for (let i = 0; i < text.length; i++) hex += text.charCodeAt(i).toString(16).padStart(4, '0');
  return hex;
}

const A4 = { width: 595.28, height: 841.89 };
const MARGIN = 56;

/** The title page (and its continuations, for a long history): name, revision, dates, milestones, pages. */
export function titlePages(
  doc: PDFDocument,
  fonts: PdfFonts,
  head: PrototypeHead,
  plan: PagePlan,
  text: XmlText,
  nameSource: string,
): void {
  const lines: { text: string; size: number; bold?: boolean; gap?: number; source?: string }[] = [
    { text: head.name ?? `Prototype ${head.id}`, size: 22, bold: true, source: nameSource },
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

  let y = Infinity;
  for (const line of lines) {
    const bold = line.bold ?? false;
    const pieces = wrap(fonts, text.clean(line.text, line.source), bold, line.size, A4.width - 2 * MARGIN);
    const missing: string[] = [];
    for (const [index, piece] of pieces.entries()) {
      const step = index === 0 ? line.size * 1.35 + (line.gap ?? 0) : line.size * 1.25;
      if (y + step > A4.height - MARGIN) {
        doc.addPage({ size: [A4.width, A4.height], margin: 0 });
        y = MARGIN;
      }
      y += step;
      const cut = fonts.runs(piece, bold);
      missing.push(...cut.missing);
      drawLine(doc, fonts, piece, cut, MARGIN, y, line.size, true);
    }
    fonts.count(missing, line.source);
  }
}

/**
 * Splits at spaces so that each piece fits the width (a long word alone stays whole). Words are
 * measured once each, so a name of thousands of words costs as many layouts, not their square.
 */
function wrap(fonts: PdfFonts, line: string, bold: boolean, size: number, width: number): string[] {
  const widthOf = (piece: string): number =>
    fonts.runs(piece, bold).runs.reduce((sum, run) => sum + fonts.width(run, size), 0);
  const space = widthOf(' ');
  const out: string[] = [];
  let current = '';
  let used = 0;
  for (const word of line.split(' ')) {
    const wide = widthOf(word);
    if (current !== '' && used + space + wide > width) {
      out.push(current);
      [current, used] = [word, wide];
    } else {
      [current, used] = current === '' ? [word, wide] : [`${current} ${word}`, used + space + wide];
    }
  }
  out.push(current);
  return out;
}
