import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { CAPTION_HEIGHT } from '../../src/convert/pdf-binder.js';
import { FONT_PACKAGES } from '../../src/convert/pdf/font-packages.js';
import type { ConvertReport, PrototypeReport } from '../../src/convert/report.js';
import { exportAccount } from '../../src/export/export-account.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { send } from '../fake-service/helpers.js';
import { runCli } from '../helpers/cli.js';
import { expectedFrom, pageSizeOf, type ExpectedPage, type ExpectedPrototype } from './expected.js';
import { requireTool, runTool, tool } from './tools.js';

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

/**
 * Code points each embedded font's ToUnicode map gives a glyph for, by font object: read by qpdf
 * once per file (the whole PDF as JSON, font programs included), as two tests ask of the binder.
 */
const fontsRead = new Map<string, Promise<Map<string, Set<number>>>>();
function toUnicodeByFont(file: string): Promise<Map<string, Set<number>>> {
  let read = fontsRead.get(file);
  if (read === undefined) {
    read = toUnicodeRead(file);
    fontsRead.set(file, read);
  }
  return read;
}

async function toUnicodeRead(file: string): Promise<Map<string, Set<number>>> {
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

/**
 * The lines pdftotext reads inside a box (points, from the page's top left), in its reading order,
 * the embedding marks it puts around right-to-left text and its numbers left out. Only the text
 * inside counts, the direction of its lines included: poppler orders a line's words by the
 * direction most of the letters it reads take.
 */
async function linesInside(
  file: string,
  page: number,
  box: { x: number; y: number; width: number; height: number },
): Promise<string[]> {
  const crop = [box.x - TOLERANCE, box.y - TOLERANCE, box.width + 2 * TOLERANCE, box.height + 2 * TOLERANCE];
  const [x, y, width, height] = crop.map((n) => String(Math.round(n))) as [string, string, string, string];
  const args = ['-r', '72', '-x', x, '-y', y, '-W', width, '-H', height, '-f', String(page), '-l', String(page)];
  const text = await tool(PDFTOTEXT, [...args, '-enc', 'UTF-8', file, '-']);
  return text
    .replace(/[\u202a-\u202e\f]/g, '')
    .split('\n')
    .map((line) => line.trim());
}

const drawn = (text: string): string[] => [...text].filter((char) => char.trim() !== '');

/** The labels of a page's elements, layers' included. */
const labelsOf = (page: ExpectedPage): string[] =>
  [...page.layers.flatMap((l) => l.elements), ...page.elements]
    .map((e) => e.json.text)
    .filter((text): text is string => typeof text === 'string');

/** Which of the packages dpkg says are installed, asked here rather than of the code under test. */
async function dpkgInstalled(packages: readonly string[]): Promise<Set<string>> {
  const run = await runTool('dpkg-query', ['-W', '-f', '${Package} ${db:Status-Status}\\n', ...packages]);
  return new Set(
    run.stdout
      .split('\n')
      .filter((line) => line.endsWith(' installed'))
      .map((line) => line.split(' ')[0] as string),
  );
}

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
    for (const label of SCRIPT_LABELS) {
      const lines = await linesInside(binder, 2, { ...label, x: left + label.x, y: top + label.y });
      expect(lines, label.text).toContain(label.text);
    }
  });

  it('passes qpdf --check', async () => {
    expect(await tool(QPDF, ['--check', binder])).toContain('No syntax or stream encoding errors');
  });

  it('with fonts lacking a script, lists each character it replaced and names no installed package', async () => {
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
    const short = without.prototypes.find((p) => p.id === PROTOTYPE) as PrototypeReport;
    // Every CJK character and emoji of the prototype's texts, and nothing else, listed once by code point.
    const proto = (await expectedFrom(archive)).find((p) => p.id === PROTOTYPE) as ExpectedPrototype;
    const texts = [proto.name, ...proto.pages.flatMap((page) => [page.name, ...labelsOf(page)])].join('');
    const lacking = new Set(
      texts.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Extended_Pictographic}]/gu),
    );
    const listed = short.missingCharacters ?? [];
    expect(new Set(listed.map((m) => m.character))).toEqual(lacking);
    expect(listed.length).toBe(lacking.size);
    for (const m of listed)
      expect(m.codePoint).toBe(`U+${m.character.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}`);
    expect(listed.reduce((sum, m) => sum + m.count, 0)).toBe(short.replacedCharacters);
    expect(short.replacedCharacters).toBeGreaterThanOrEqual(CJK_CHARACTERS);

    // Each prototype's block names its characters; the closing lines every prototype that lost some.
    const block = run.stdout.split(/\n(?=\S)/).find((b) => b.startsWith(`ok  ${PROTOTYPE} `)) ?? '';
    const first = listed
      .slice(0, 3)
      .map((m) => `${m.codePoint} ${m.character}${m.count > 1 ? ` x${m.count}` : ''}`)
      .join(', ');
    expect(block).toContain(`\n    ${short.replacedCharacters} characters no font here has drawn as ?: ${first}, `);
    const short_ = without.prototypes.filter((p) => p.replacedCharacters > 0);
    const total = short_.reduce((sum, p) => sum + p.replacedCharacters, 0);
    expect(run.stdout).toContain(
      `${total} characters drawn as ? for want of a font, in prototypes ${short_.map((p) => p.id).join(', ')} (the text stays searchable): `,
    );
    // A package is named to install only if dpkg says it is not installed; here both are, so none is.
    const installed = await dpkgInstalled(FONT_PACKAGES.map((p) => p.debian));
    for (const [, name, debian] of run.stdout.matchAll(/^install (.+) \(Debian: (\S+)\) for /gm)) {
      expect(installed.has(debian as string), `${name} (${debian})`).toBe(false);
    }
    for (const m of listed) {
      expect(m.font, m.character).toBeDefined();
      expect(m.font?.installed, m.character).toBe(installed.has(m.font?.debian as string));
    }
    // fonts-noto-cjk is installed for these tests (scripts/system-tools.json): said to be, not to install.
    expect(installed.has('fonts-noto-cjk')).toBe(true);
    expect(run.stdout).toMatch(
      /^Noto Sans CJK \(Debian: fonts-noto-cjk\) has U\+.* and is installed, but fontconfig does not offer it here/m,
    );

    // The text itself is whole: pdftotext reads each label, its missing characters included.
    for (const label of SCRIPT_LABELS) {
      const page = pageSizeOf(proto.pages[0] as ExpectedPage);
      const box = { ...label, x: page.left + label.x, y: page.top + label.y };
      expect(await linesInside(join(out, short.file as string), 2, box), label.text).toContain(label.text);
    }
  });
});
