// The parts of pdfkit and fontkit the binder uses; neither package ships its own types.
declare module 'pdfkit' {
  interface PdfReference {
    data: Record<string, unknown>;
    end(chunk?: Uint8Array | string): void;
  }
  interface PdfPage {
    dictionary: PdfReference;
    annotations: PdfReference[];
    fonts: Record<string, PdfReference>;
  }
  interface GlyphPosition {
    xAdvance: number;
    yAdvance: number;
    xOffset: number;
    yOffset: number;
    advanceWidth: number;
  }
  /** pdfkit's font of the moment: the one way to have a run shaped and its glyphs kept in the subset. */
  interface PdfFont {
    id: string;
    ref(): PdfReference;
    encode(text: string, features?: string[]): [string[], GlyphPosition[]];
    /** The same layout encode() draws (fontkit's, run whole when features are given), each glyph with its characters. */
    layout(text: string, features: string[]): { glyphs: { codePoints: number[] }[] };
  }
  interface PdfOutline {
    addItem(title: string, options?: { expanded?: boolean }): PdfOutline;
  }
  interface TextOptions {
    lineBreak?: boolean;
    baseline?: 'alphabetic' | 'top';
    features?: string[];
  }
  class PDFDocument {
    constructor(options?: Record<string, unknown>);
    page: PdfPage;
    _font: PdfFont;
    outline: PdfOutline;
    info: Record<string, unknown>;
    on(event: 'data', listener: (chunk: Uint8Array) => void): this;
    on(event: 'end', listener: () => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
    addPage(options?: Record<string, unknown>): this;
    registerFont(name: string, src: string | Uint8Array, family?: string): this;
    font(name: string): this;
    fontSize(size: number): this;
    fillColor(color: string): this;
    text(text: string, x: number, y: number, options?: TextOptions): this;
    widthOfString(text: string, options?: TextOptions): number;
    image(src: Uint8Array, x: number, y: number, options?: { width?: number; height?: number }): this;
    save(): this;
    restore(): this;
    addContent(data: string): this;
    ref(data?: Record<string, unknown>): PdfReference;
    end(): void;
  }
  export default PDFDocument;
  export type { PdfReference, PdfPage, GlyphPosition };
}

declare module 'fontkit' {
  interface Font {
    postscriptName: string;
    /** Every code point the font maps to a glyph. */
    characterSet: number[];
    ascent: number;
    descent: number;
    unitsPerEm: number;
  }
  export function create(buffer: Uint8Array, postscriptName?: string): Font;
}
