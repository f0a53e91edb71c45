import { create } from 'fontkit';
import type PDFDocument from 'pdfkit';
import type { GlyphPosition } from 'pdfkit';
import { bundledFonts } from './bundled-fonts.js';
import { covers, type FontFace, type FontFaces } from './system-fonts.js';
import { lineRuns, type LineRuns, type TextRun } from './text-runs.js';

/**
 * The fonts of one binder. Each character draws with the first face that has it: the bundled
 * DejaVu Sans, then the machine's faces in fontconfig's fallback order; pdfkit embeds each face
 * used as a subset of the glyphs drawn (fontkit subsets and shapes). A character no face has is
 * drawn as `?` and counted, once per text it comes from, as XmlText counts what it drops; its text
 * stays whole in /ActualText (pdf-text.ts).
 */
export class PdfFonts {
  /** Each character drawn as `?` because no face has it, with how often (once per source). */
  readonly missing = new Map<string, number>();
  /** The faces used, in the order first used. */
  readonly used: string[] = [];
  private readonly faces: FontFaces;
  private readonly counted = new Set<string>();
  private readonly metrics = new Map<string, Metrics>();
  private readonly picks = { regular: new Map<number, number>(), bold: new Map<number, number>() };

  /** `system`: the machine's faces, tried after the bundled one. */
  constructor(
    private readonly doc: PDFDocument,
    system: FontFaces,
  ) {
    const bundled = bundledFonts();
    this.faces = {
      regular: [...bundled.regular, ...system.regular],
      bold: [...bundled.bold, ...system.bold],
    };
  }

  /** The runs of one line, each with the pdfkit font name that draws it. */
  runs(line: string, bold: boolean): Omit<LineRuns, 'runs'> & { runs: (TextRun & { font: string })[] } {
    const list = this.listOf(bold);
    const cache = this.picks[bold ? 'bold' : 'regular'];
    const pick = (code: number): number => {
      let index = cache.get(code);
      if (index === undefined) {
        index = list.findIndex((face) => covers(face.ranges, code));
        cache.set(code, index);
      }
      return index;
    };
    const cut = lineRuns(line, pick);
    return { ...cut, runs: cut.runs.map((run) => ({ ...run, font: this.fontName(bold, run.face) })) };
  }

  /** Counts a text's missing characters the first time its source is seen. */
  count(missing: readonly string[], source: string | undefined): void {
    if (missing.length === 0 || (source !== undefined && this.counted.has(source))) return;
    for (const char of missing) this.missing.set(char, (this.missing.get(char) ?? 0) + 1);
    if (source !== undefined) this.counted.add(source);
  }

  /** Selects the font in the document and says its vertical metrics, in ems. */
  use(font: string, size: number): Metrics {
    this.doc.font(font).fontSize(size);
    return this.metrics.get(font) as Metrics;
  }

  /**
   * A run shaped into glyphs (hex codes, with the adjustments and offsets fontkit's layout gives),
   * its font in the page's resources; with `characters`, what each glyph stands for (a second
   * layout, asked only where it is used). The binder writes the text operators itself: pdfkit's
   * text() wraps every run in q/Q, and a reader measures an /ActualText span with the state at its
   * end, where that font and size would be gone.
   */
  shape(
    run: { font: string; text: string },
    size: number,
    characters: boolean,
  ): { id: string; glyphs: string[]; positions: GlyphPosition[]; characters?: string[] } {
    this.use(run.font, size);
    const font = this.doc._font;
    this.doc.page.fonts[font.id] ??= font.ref();
    const [glyphs, positions] = font.encode(run.text, WHOLE_RUN);
    if (!characters) return { id: font.id, glyphs, positions };
    const laid = font.layout(run.text, WHOLE_RUN).glyphs;
    return {
      id: font.id,
      glyphs,
      positions,
      characters: laid.map((glyph) => String.fromCodePoint(...glyph.codePoints)),
    };
  }

  width(run: { font: string; text: string }, size: number): number {
    this.use(run.font, size);
    return this.doc.widthOfString(run.text, { features: WHOLE_RUN });
  }

  private listOf(bold: boolean): readonly FontFace[] {
    return bold ? this.faces.bold : this.faces.regular;
  }

  private fontName(bold: boolean, index: number): string {
    // The bundled face has `?`, so every run has a face: a replacement draws with it at worst.
    const face = this.listOf(bold)[index] as FontFace;
    const name = `${face.file}#${face.index}`;
    if (!this.metrics.has(name)) {
      const bytes = face.read();
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
