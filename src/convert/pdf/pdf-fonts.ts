import { readFileSync } from 'node:fs';
import { create } from 'fontkit';
import type PDFDocument from 'pdfkit';
import type { GlyphPosition } from 'pdfkit';
import { covers, type FontFace, type FontFaces } from './system-fonts.js';
import { lineRuns, type TextRun } from './text-runs.js';

/**
 * The fonts of one binder. Each character draws with the first face of fontconfig's fallback list
 * that has it; pdfkit embeds each face used as a subset of the glyphs drawn (fontkit subsets and
 * shapes). Without any usable face (no fontconfig, or no fonts at all) the standard Helvetica
 * draws what WinAnsi holds. Either way a character no font has is drawn as `?` and counted, once
 * per text it comes from, as XmlText counts what it drops; the exact text stays in /ActualText.
 */
export class PdfFonts {
  /** Characters drawn as `?` because no font has them, once per source. */
  replaced = 0;
  /** Files of the faces used, in the order first used. */
  readonly used: string[] = [];
  private readonly counted = new Set<string>();
  private readonly metrics = new Map<string, Metrics>();
  private readonly picks = { regular: new Map<number, number>(), bold: new Map<number, number>() };

  constructor(
    private readonly doc: PDFDocument,
    private readonly faces: FontFaces,
  ) {}

  /** The runs of one line, each with the pdfkit font name that draws it. */
  runs(line: string, bold: boolean): { runs: (TextRun & { font: string })[]; replaced: number } {
    const list = this.listOf(bold);
    const cache = this.picks[bold ? 'bold' : 'regular'];
    const pick = (code: number): number => {
      let index = cache.get(code);
      if (index === undefined) {
        index = list.length === 0 ? (WIN_ANSI.has(code) ? 0 : -1) : list.findIndex((face) => covers(face, code));
        cache.set(code, index);
      }
      return index;
    };
    const { runs, replaced } = lineRuns(line, pick);
    return { runs: runs.map((run) => ({ ...run, font: this.fontName(bold, run.face) })), replaced };
  }

  /** Counts a text's replaced characters the first time its source is seen. */
  count(replaced: number, source: string | undefined): void {
    if (replaced === 0 || (source !== undefined && this.counted.has(source))) return;
    this.replaced += replaced;
    if (source !== undefined) this.counted.add(source);
  }

  /** Selects the font in the document and says its vertical metrics, in ems. */
  use(font: string, size: number): Metrics {
    this.doc.font(font).fontSize(size);
    return this.metrics.get(font) ?? STANDARD;
  }

  /**
   * A run shaped into glyphs (hex codes, with the adjustments and offsets fontkit's layout gives),
   * its font in the page's resources. The binder writes the text operators itself: pdfkit's text()
   * wraps every run in q/Q, and a reader measures an /ActualText span with the state at its end,
   * where that font and size would be gone.
   */
  shape(
    run: { font: string; text: string },
    size: number,
  ): { id: string; glyphs: string[]; positions: GlyphPosition[] } {
    this.use(run.font, size);
    const font = this.doc._font;
    this.doc.page.fonts[font.id] ??= font.ref();
    const [glyphs, positions] = font.encode(run.text, WHOLE_RUN);
    return { id: font.id, glyphs, positions };
  }

  width(run: { font: string; text: string }, size: number): number {
    this.use(run.font, size);
    return this.doc.widthOfString(run.text, { features: WHOLE_RUN });
  }

  private listOf(bold: boolean): readonly FontFace[] {
    // A machine with regular faces and no bold ones draws headings in the regular faces.
    return bold && this.faces.bold.length > 0 ? this.faces.bold : this.faces.regular;
  }

  private fontName(bold: boolean, index: number): string {
    const list = this.listOf(bold);
    const face = list[index];
    if (face === undefined) return bold ? 'Helvetica-Bold' : 'Helvetica';
    const name = `${face.file}#${face.index}`;
    if (!this.metrics.has(name)) {
      const bytes = readFileSync(face.file);
      const collection = face.index > 0 || /\.(ttc|otc)$/i.test(face.file);
      const font = create(bytes, collection ? face.postscriptName : undefined);
      this.metrics.set(name, { ascent: font.ascent / font.unitsPerEm, descent: font.descent / font.unitsPerEm });
      this.doc.registerFont(name, bytes, collection ? face.postscriptName : undefined);
      this.used.push(`${face.postscriptName} (${face.file})`);
    }
    return name;
  }
}

/**
 * Features asked for (none beyond the script's own) make pdfkit lay out a run whole: without, it
 * lays out word by word, and a right-to-left run would keep its words in reading order.
 */
const WHOLE_RUN: string[] = [];

export interface Metrics {
  /** Above the baseline, positive. */
  ascent: number;
  /** Below the baseline, negative. */
  descent: number;
}

/** Helvetica's, from its AFM. */
const STANDARD: Metrics = { ascent: 0.718, descent: -0.207 };

/** What the standard fonts encode (WinAnsiEncoding). */
const WIN_ANSI = new Set<number>([
  ...Array.from({ length: 0x7f - 0x20 }, (_, i) => 0x20 + i),
  ...Array.from({ length: 0x100 - 0xa0 }, (_, i) => 0xa0 + i),
  ...[0x20ac, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x017d],
  ...[0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x017e],
  0x0178,
]);
