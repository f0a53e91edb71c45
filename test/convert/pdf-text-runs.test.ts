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

const PDFFONTS = requireTool('/usr/bin/pdffonts', 'poppler-utils');
const PDFTOTEXT = requireTool('/usr/bin/pdftotext', 'poppler-utils');
const QPDF = requireTool('/usr/bin/qpdf', 'qpdf');

/** Face 0 has Latin, Hebrew, Arabic and `?`; face 1 has CJK; nothing has emoji. */
const pick = (code: number): number =>
  code < 0x0800 ? 0 : (code >= 0x3000 && code <= 0x9fff) || (code >= 0xac00 && code <= 0xd7af) ? 1 : -1;

describe('a line cut into runs of one font each, in the order they are drawn', () => {
  it.each([
    ['Latin alone', 'abc', [[0, 'abc']], 0],
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
    ['a character no font has is replaced and counted', 'a🛒b', [[0, 'a?b']], 1],
    ['a joiner no font has draws nothing, and is not counted', 'a\u200Db', [[0, 'ab']], 0],
  ])('%s', (_, line, runs, replaced = 0) => {
    const result = lineRuns(line, pick);
    expect(result.runs.map((r) => [r.face, r.text])).toEqual(runs);
    expect(result.replaced).toBe(replaced);
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
  it('draws with the standard Helvetica, counts every character it lacks, keeps the text whole', async () => {
    const label = 'Привет 日本 café';
    const element: ElementData = {
      id: 'element1',
      entry: 'pages/page1/elements/element1.json',
      raw: '{}',
      type: 'button',
      box: { x: 10, y: 10, width: 200, height: 30 },
      text: label,
      target: null,
      style: undefined,
    };
    const page: PageMeta = { id: 'page1', name: 'Ελλάδα', layerIds: [] };
    const content: PageContent = {
      page,
      number: 1,
      size: { width: 300, height: 100 },
      png: undefined,
      layers: [],
      elements: [element],
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
    // Cyrillic 6 and CJK 2 in the label, Greek 6 in the page name, CJK 2 in the prototype's name; é is WinAnsi.
    expect(stats.replacedCharacters).toBe(6 + 2 + 6 + 2);
    expect(stats.fonts).toEqual([]);
    const dir = await mkdtemp(join(tmpdir(), 'rabbit-pdf-nofont-'));
    try {
      const file = join(dir, 'binder.pdf');
      await writeFile(file, bytes);
      expect(await tool(QPDF, ['--check', file])).toContain('No syntax or stream encoding errors');
      expect(await tool(PDFFONTS, [file])).toMatch(/^Helvetica +Type 1 +WinAnsi +no +no +no/m);
      expect(await tool(PDFTOTEXT, ['-enc', 'UTF-8', file, '-'])).toContain(label);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
