import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { CAPTION_HEIGHT } from '../../src/convert/pdf-binder.js';
import type { ConvertReport } from '../../src/convert/report.js';
import { exportAccount } from '../../src/export/export-account.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { send } from '../fake-service/helpers.js';
import { runCli } from '../helpers/cli.js';
import { expectedFrom, pageSizeOf, type ExpectedPage } from './expected.js';
import { requireTool, tool } from './tools.js';

/**
 * Labels in every script the binder must draw, on prototype 17 (whose name has Japanese in it),
 * two of them off its 320 x 240 rendering: left of and above it, and beyond its far corner.
 * Judged by poppler (pdffonts, pdftotext, pdfinfo, pdftoppm) and qpdf, and by the fonts'
 * own ToUnicode maps: a character with a glyph in an embedded subset is one drawn for real.
 * The machine needs fonts-dejavu-core and fonts-noto-cjk.
 */
const PDFFONTS = requireTool('/usr/bin/pdffonts', 'poppler-utils');
const PDFTOTEXT = requireTool('/usr/bin/pdftotext', 'poppler-utils');
const PDFINFO = requireTool('/usr/bin/pdfinfo', 'poppler-utils');
const PDFTOPPM = requireTool('/usr/bin/pdftoppm', 'poppler-utils');
const QPDF = requireTool('/usr/bin/qpdf', 'qpdf');

const SCREENSHOTS = fileURLToPath(
  new URL(
    process.env['UPDATE_SCREENSHOTS'] ? '../../docs/screenshots/' : '../../test-output/screenshots/',
    import.meta.url,
  ),
);

const PROTOTYPE = '17';
const PAGE = 'page1';
const SCRIPT_LABELS = [
  { text: 'Καλημέρα κόσμε', x: 10, y: 10 },
  { text: 'Привет, мир', x: 10, y: 50 },
  { text: '日本語のボタン 中文 한국어', x: 10, y: 90 },
  { text: 'مرحبا بالعالم', x: 160, y: 10 },
  { text: 'שלום עולם 123', x: 160, y: 50 },
  { text: 'Ελληνικά πέρα', x: -150, y: -40 },
  { text: 'Далеко справа 東京', x: 400, y: 300 },
].map((label) => ({ ...label, width: 140, height: 24 }));
/** The CJK characters of the labels and of the prototype's name, which a font set without CJK lacks. */
const CJK_CHARACTERS = 12 + 2 + 3;
const TOLERANCE = 2;

let dir: string;
let archive: string;
let report: ConvertReport;
let binder: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-pdf-scripts-'));
  const service = await startFakeService({ seed: 1, now: () => 1_300_000_000_000 });
  try {
    for (const label of SCRIPT_LABELS) {
      const response = await send(service, 'POST', `prototypes/${PROTOTYPE}/pages/${PAGE}/elements.json`, {
        type: 'button',
        position: { x: label.x, y: label.y },
        dimensions: { width: label.width, height: label.height },
        text: label.text,
      });
      if (response.status !== 201) throw new Error(`adding an element answered ${response.status}`);
    }
    archive = join(dir, 'archive.zip');
    const result = await exportAccount({ out: archive, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
    if (!result.complete) throw new Error('the export is incomplete');
  } finally {
    await service.close();
  }
  report = await convertArchive({ archive, out: join(dir, 'pdf'), to: 'pdf', prototypes: [PROTOTYPE] });
  binder = join(dir, 'pdf', report.prototypes[0]?.file as string);
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Code points each embedded font's ToUnicode map gives a glyph for, by font object. */
async function toUnicodeByFont(file: string): Promise<Map<string, Set<number>>> {
  const json = JSON.parse(
    await tool(QPDF, ['--json=2', '--json-key=qpdf', '--json-stream-data=inline', '--decode-level=generalized', file]),
  ) as { qpdf: [unknown, Record<string, { value?: Record<string, unknown>; stream?: { data?: string } }>] };
  const objects = json.qpdf[1];
  const fonts = new Map<string, Set<number>>();
  for (const [key, object] of Object.entries(objects)) {
    const font = object.value;
    if (font?.['/Type'] !== '/Font' || typeof font['/ToUnicode'] !== 'string') continue;
    const cmap = Buffer.from(objects[`obj:${font['/ToUnicode']}`]?.stream?.data ?? '', 'base64').toString('latin1');
    const points = new Set<number>();
    for (const [, hex] of cmap.matchAll(/<[0-9a-fA-F]+>\s*<([0-9a-fA-F]{4,})>/g)) {
      for (const char of Buffer.from(hex as string, 'hex')
        .swap16()
        .toString('utf16le')) {
        points.add(char.codePointAt(0) as number);
      }
    }
    for (const [, list] of cmap.matchAll(/<[0-9a-fA-F]+>\s*<[0-9a-fA-F]+>\s*\[([^\]]*)\]/g)) {
      for (const [, hex] of (list as string).matchAll(/<([0-9a-fA-F]+)>/g)) {
        for (const char of Buffer.from(hex as string, 'hex')
          .swap16()
          .toString('utf16le')) {
          points.add(char.codePointAt(0) as number);
        }
      }
    }
    fonts.set(key.replace(/^obj:/, ''), points);
  }
  return fonts;
}

/** pdftotext -bbox's words: xMin, yMin, xMax, yMax and the text (escaped as XML), negative places included. */
const wordsOf = (html: string): RegExpMatchArray[] => [
  ...html.matchAll(/<word xMin="(-?[\d.]+)" yMin="(-?[\d.]+)" xMax="(-?[\d.]+)" yMax="(-?[\d.]+)">(.*?)<\/word>/g),
];

const drawn = (text: string): string[] => [...text].filter((char) => char.trim() !== '');

describe('PDF binders draw every script with embedded subset fonts', () => {
  it('embeds only subsets: pdffonts lists every font embedded, as a subset, with a ToUnicode map', async () => {
    const lines = (await tool(PDFFONTS, [binder])).split('\n').slice(2).filter(Boolean);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) {
      expect(line, line).toMatch(/^[A-Z]{6}\+\S+ .* yes +yes +yes +\d+ +\d+$/);
    }
  });

  it('has a glyph for every character of every label, Greek, Cyrillic, CJK, Arabic and Hebrew', async () => {
    const covered = new Set([...(await toUnicodeByFont(binder)).values()].flatMap((set) => [...set]));
    const missing = SCRIPT_LABELS.flatMap((label) => drawn(label.text)).filter(
      (char) => !covered.has(char.codePointAt(0) as number),
    );
    expect(missing).toEqual([]);
  });

  it('draws the prototype name on the title page in a CJK font, and pdftoppm renders it', async () => {
    const fonts = await toUnicodeByFont(binder);
    const titleFonts = (await tool(PDFFONTS, ['-f', '1', '-l', '1', binder]))
      .split('\n')
      .slice(2)
      .filter(Boolean)
      .map((line) => line.trim().split(/\s+/).slice(-2)[0] as string);
    const onTitle = new Set(titleFonts.flatMap((id) => [...(fonts.get(`${id} 0 R`) ?? [])]));
    for (const char of '日本語') expect(onTitle.has(char.codePointAt(0) as number), char).toBe(true);
    // The picture in docs/convert.md: refreshed with UPDATE_SCREENSHOTS=1, ordinary runs write to test-output/.
    await mkdir(SCREENSHOTS, { recursive: true });
    const prefix = join(SCREENSHOTS, 'pdf-title-cjk');
    await tool(PDFTOPPM, ['-f', '1', '-l', '1', '-r', '80', '-png', '-singlefile', binder, prefix]);
    const png = await readFile(`${prefix}.png`);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
  });

  it('pdftotext finds every label at its place, the ones off the rendering included', async () => {
    // The page grows left and up to take in the labels there, and the rendering moves right and down.
    const page = (await expectedFrom(archive)).find((p) => p.id === PROTOTYPE)?.pages[0] as ExpectedPage;
    const { width, height, left, top } = pageSizeOf(page);
    expect([left, top]).toEqual([150, 40]);
    expect(await tool(PDFINFO, ['-box', '-f', '2', '-l', '2', binder])).toMatch(
      new RegExp(`Page +2 MediaBox: +0\\.00 +-${CAPTION_HEIGHT}\\.00 +${width}\\.00 +${height}\\.00\n`),
    );
    const html = await tool(PDFTOTEXT, ['-bbox', '-enc', 'UTF-8', '-f', '2', '-l', '2', binder, '-']);
    const words = wordsOf(html);
    for (const label of SCRIPT_LABELS) {
      const word = words.find(
        (m) =>
          m[5] === label.text &&
          Number(m[1]) >= left + label.x - TOLERANCE &&
          Number(m[2]) >= top + label.y - TOLERANCE &&
          Number(m[3]) <= left + label.x + label.width + TOLERANCE &&
          Number(m[4]) <= top + label.y + label.height + TOLERANCE,
      );
      expect(word, `${label.text} at ${label.x},${label.y}`).toBeDefined();
    }
  });

  it('passes qpdf --check', async () => {
    expect(await tool(QPDF, ['--check', binder])).toContain('No syntax or stream encoding errors');
  });

  it('with fonts lacking a script, counts what it replaced and says in which prototypes', async () => {
    // fontconfig reads its configuration from FONTCONFIG_FILE: this one knows DejaVu only, which has no CJK.
    const conf = join(dir, 'fonts.conf');
    await writeFile(
      conf,
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
        `  <dir>/usr/share/fonts/truetype/dejavu</dir>\n  <cachedir>${join(dir, 'fc-cache')}</cachedir>\n</fontconfig>\n`,
    );
    const out = join(dir, 'no-cjk');
    const run = await runCli(['convert', archive, '--to', 'pdf', '--out', out], { env: { FONTCONFIG_FILE: conf } });
    expect(run.code, run.stderr).toBe(0);
    const without = JSON.parse(await readFile(join(out, 'convert-report.json'), 'utf8')) as ConvertReport;
    const withFonts = report.prototypes[0]?.replacedCharacters as number;
    const short = without.prototypes.find((p) => p.id === PROTOTYPE);
    expect(short?.replacedCharacters).toBe(withFonts + CJK_CHARACTERS);
    // Each prototype's block says its count; the closing lines name every prototype that lost glyphs.
    const block = run.stdout.split(/\n(?=\S)/).find((b) => b.startsWith(`ok  ${PROTOTYPE} `)) ?? '';
    expect(block).toContain(`\n    ${short?.replacedCharacters} characters no font here has drawn as ?`);
    const lacking = without.prototypes.filter((p) => p.replacedCharacters > 0);
    const total = lacking.reduce((sum, p) => sum + p.replacedCharacters, 0);
    expect(run.stdout).toContain(
      `${total} characters drawn as ? for want of a font, in prototypes ${lacking.map((p) => p.id).join(', ')}`,
    );
    // The text itself is whole: pdftotext reads the labels from /ActualText.
    const words = wordsOf(await tool(PDFTOTEXT, ['-bbox', '-enc', 'UTF-8', join(out, short?.file as string), '-']));
    for (const label of SCRIPT_LABELS) expect(words.map((m) => m[5])).toContain(label.text);
  });
});
