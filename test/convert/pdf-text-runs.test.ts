import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PageContent, PagePlan, PrototypeHead } from '../../src/convert/page-walk.js';
import { pdfBinder } from '../../src/convert/pdf-binder.js';
import { NO_FONTS, parseCharset, parseFcMatch } from '../../src/convert/pdf/system-fonts.js';
import { lineRuns } from '../../src/convert/pdf/text-runs.js';
import type { ElementData, PageMeta } from '../../src/convert/prototype-data.js';
import { XmlText } from '../../src/convert/xml-text.js';
import { requireTool, tool } from './tools.js';

/** The embedding marks pdftotext puts around right-to-left text and the numbers in it. */
const withoutBidiMarks = (text: string): string => text.replace(/[\u202a-\u202e]/g, '');

const PDFFONTS = requireTool('/usr/bin/pdffonts', 'poppler-utils');
const PDFTOTEXT = requireTool('/usr/bin/pdftotext', 'poppler-utils');
const QPDF = requireTool('/usr/bin/qpdf', 'qpdf');

/** Face 0 has Latin, Hebrew, Arabic and `?`; face 1 has CJK; nothing has emoji. */
const pick = (code: number): number =>
  code < 0x0800 ? 0 : (code >= 0x3000 && code <= 0x9fff) || (code >= 0xac00 && code <= 0xd7af) ? 1 : -1;

describe('a line cut into runs of one font each, in the order they are drawn', () => {
  it.each([
    ['Latin alone', 'abc', [[0, 'abc']]],
    [
      'a font change',
      'Shop 日本',
      [
        [0, 'Shop '],
        [1, '日本'],
      ],
    ],
    [
      'Hebrew inside a left-to-right line',
      'abc שלום def',
      [
        [0, 'abc '],
        [0, 'שלום'],
        [0, ' def'],
      ],
    ],
    [
      'a number after Hebrew reads left to right, on the left',
      'שלום 123',
      [
        [0, '123'],
        [0, 'שלום '],
      ],
    ],
    [
      'Latin inside a right-to-left line goes left',
      'שלום abc',
      [
        [0, 'abc'],
        [0, 'שלום '],
      ],
    ],
    ['Arabic with two words stays one run', 'مرحبا بالعالم', [[0, 'مرحبا بالعالم']]],
    [
      'Hebrew and Arabic side by side are shaped apart',
      'עברית - عربي',
      [
        [0, 'عربي'],
        [0, 'עברית - '],
      ],
    ],
    [
      'a character no font has is a replacement of its own, which keeps it',
      'a🛒b',
      [
        [0, 'a'],
        [0, '?', '🛒'],
        [0, 'b'],
      ],
      ['🛒'],
    ],
    [
      'a replacement inside right-to-left text takes its place there',
      'שלום 🛒 עולם',
      [
        [0, ' עולם'],
        [0, '?', '🛒'],
        [0, 'שלום '],
      ],
      ['🛒'],
    ],
    ['a joiner no font has draws nothing, and is not counted', 'a\u200Db', [[0, 'ab']], []],
  ])('%s', (_, line, runs, missing: string[] = []) => {
    const result = lineRuns(line, pick);
    expect(result.runs.map((r) => (r.actual === undefined ? [r.face, r.text] : [r.face, r.text, r.actual]))).toEqual(
      runs,
    );
    expect(result.missing).toEqual(missing);
  });

  it.each([
    ['abc def', false],
    ['Shop 日本 123', false],
    ['abc שלום def', true],
    ['مرحبا', true],
  ])('says whether %s holds right-to-left text', (line, rightToLeft) => {
    expect(lineRuns(line, pick).rightToLeft).toBe(rightToLeft);
  });
});

describe("fontconfig's answer", () => {
  it('keeps embeddable faces with their character sets, and leaves colour fonts out', () => {
    const faces = parseFcMatch(
      [
        '/f/DejaVuSans.ttf\t0\tDejaVuSans\tFalse\tTrueType\t20-7e a0-17f',
        '/f/NotoColorEmoji.ttf\t0\tNotoColorEmoji\tTrue\tTrueType\t1f300-1f5ff',
        '/f/NotoSansCJK.ttc\t2\tNotoSansCJKsc-Regular\tFalse\tCFF\t3000-303f 4e00-9fff',
        '/f/font.pcf\t0\tFixed\tFalse\tPCF\t20-7e',
      ].join('\n'),
    );
    expect(faces.map((f) => [f.postscriptName, f.index])).toEqual([
      ['DejaVuSans', 0],
      ['NotoSansCJKsc-Regular', 2],
    ]);
    expect(parseCharset('20-7e a0 3000-303f')).toEqual([
      [0x20, 0x7e],
      [0xa0, 0xa0],
      [0x3000, 0x303f],
    ]);
  });
});

describe('a machine without any font fontconfig can offer', () => {
  it('draws with the bundled DejaVu Sans, lists each character it lacks, keeps the text whole', async () => {
    const labels = ['Привет 日本 café 🛒', 'مرحبا 🛒 بالعالم'];
    const elements = labels.map((text, index): ElementData => ({
      id: `element${index}`,
      entry: `pages/page1/elements/element${index}.json`,
      raw: '{}',
      type: 'button',
      box: { x: 10, y: 10 + 40 * index, width: 200, height: 30 },
      text,
      target: null,
      style: undefined,
    }));
    const page: PageMeta = { id: 'page1', name: 'Ελλάδα', layerIds: [] };
    const content: PageContent = {
      page,
      number: 1,
      size: { width: 300, height: 100 },
      png: undefined,
      layers: [],
      elements,
      discussions: [],
    };
    const head: PrototypeHead = {
      id: '5',
      name: 'Tokyo 東京',
      revision: 1,
      lastModification: null,
      lastUser: null,
      milestones: [],
    };
    const plan: PagePlan = { pages: [page], pageIds: new Set(['page1']), discussions: new Map() };
    const { bytes, stats } = await pdfBinder(
      head,
      plan,
      (async function* () {
        yield content;
      })(),
      new XmlText(),
      { fonts: NO_FONTS },
    );
    // Only CJK and emoji are beyond DejaVu Sans: the name's on the title page first, then the labels'.
    expect(stats.missingCharacters).toEqual([
      ...['東', '京', '日', '本'].map((character) => ({ character, count: 1 })),
      { character: '🛒', count: 2 },
    ]);
    expect(stats.replacedCharacters).toBe(6);
    expect(stats.fonts).toEqual([
      'DejaVuSans-Bold (bundled DejaVuSans-Bold.ttf)',
      'DejaVuSans (bundled DejaVuSans.ttf)',
    ]);
    const dir = await mkdtemp(join(tmpdir(), 'rabbit-pdf-nofont-'));
    try {
      const file = join(dir, 'binder.pdf');
      await writeFile(file, bytes);
      expect(await tool(QPDF, ['--check', file])).toContain('No syntax or stream encoding errors');
      const fonts = (await tool(PDFFONTS, [file])).split('\n').slice(2).filter(Boolean);
      expect(fonts.map((line) => line.split(/\s+/)[0]?.replace(/^[A-Z]{6}\+/, ''))).toEqual([
        'DejaVuSans-Bold',
        'DejaVuSans',
      ]);
      for (const line of fonts) expect(line).toMatch(/ Identity-H +yes +yes +yes /);
      const text = await tool(PDFTOTEXT, ['-enc', 'UTF-8', file, '-']);
      for (const label of labels) expect(withoutBidiMarks(text)).toContain(label);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
