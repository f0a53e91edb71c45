import { describe, expect, it } from 'vitest';
import { formatConvertTotals } from '../../src/cli/format-convert.js';
import { FONT_PACKAGES, fontFor, parseDpkgStatus } from '../../src/convert/pdf/font-packages.js';
import { parseCharset, covers } from '../../src/convert/pdf/system-fonts.js';
import { emptyPrototypeReport, type ConvertReport, type MissingCharacter } from '../../src/convert/report.js';
import { requireTool, tool } from './tools.js';

/**
 * The fonts convert names for characters a binder drew as `?`: each claim is read out of the
 * package's own fonts by fontconfig (every package is installed for the tests, see
 * scripts/system-tools.json), and the advice never names a package that is installed.
 */
const DPKG = requireTool('/usr/bin/dpkg', 'dpkg');
const FC_QUERY = requireTool('/usr/bin/fc-query', 'fontconfig');

describe('the fonts convert names', () => {
  it.each(FONT_PACKAGES.map((p) => [p.debian, p] as const))(
    '%s has every character the table says it has',
    async (_, known) => {
      const files = (await tool(DPKG, ['-L', known.debian]))
        .split('\n')
        .filter((file) => /\.(ttf|otf|ttc)$/i.test(file));
      expect(files.length).toBeGreaterThan(0);
      // One fc-query for all of them (a line per face): a process per file was a few hundred of them.
      const charsets = (await tool(FC_QUERY, ['--format', '%{charset}\n', ...files])).split('\n');
      // Every code point some file of the package has, one by one: a check of its own, not covers()'s
      // search (looking each code point up in every range of a few hundred files took seconds).
      const covered = new Set<number>();
      for (const [from, to] of charsets.flatMap((charset) => parseCharset(charset)))
        for (let code = from; code <= to; code++) covered.add(code);
      const lacking: string[] = [];
      for (const [first, last] of known.ranges) {
        for (let code = first; code <= last; code++) if (!covered.has(code)) lacking.push(code.toString(16));
      }
      expect(lacking).toEqual([]);
    },
  );

  it.each([
    ['an emoji of Unicode 9, nothing installed', '🛒', [], 'fonts-symbola', false],
    ['a CJK ideograph, nothing installed', '日', [], 'fonts-noto-cjk', false],
    ['a CJK ideograph, its font installed', '日', ['fonts-noto-cjk'], 'fonts-noto-cjk', true],
    ['an enclosed letter both have: the one not installed', '\u{1F110}', ['fonts-noto-cjk'], 'fonts-symbola', false],
    ['an emoji newer than Symbola', '🥰', [], undefined, undefined],
    ['Thai, nothing installed', 'ก', [], 'fonts-noto-core', false],
    ['Tibetan, its font installed', 'ཀ', ['fonts-noto-core'], 'fonts-noto-core', true],
    ['Linear B, which no package named here has', '\u{10000}', [], undefined, undefined],
  ])('%s', (_, char, installed, debian, isInstalled) => {
    const found = fontFor(char, new Set(installed));
    expect(found?.debian).toBe(debian);
    expect(found?.installed).toBe(isInstalled);
  });

  it("reads dpkg-query's answer: only `installed` is installed", () => {
    const output = 'fonts-noto-cjk\tinstalled\nfonts-symbola\tnot-installed\nfonts-x\tconfig-files\n';
    expect(parseDpkgStatus(output)).toEqual(new Set(['fonts-noto-cjk']));
    expect(covers([[0x10, 0x20]], 0x15)).toBe(true);
  });
});

describe("convert's closing lines for characters drawn as ?", () => {
  const missing = (character: string, font?: MissingCharacter['font']): MissingCharacter => ({
    codePoint: `U+${(character.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`,
    character,
    count: 1,
    ...(font ? { font } : {}),
  });
  const reportWith = (list: MissingCharacter[]): ConvertReport => ({
    tool: { name: 'rabbit-export', version: '0' },
    archive: 'a.zip',
    to: 'pdf',
    rendering: true,
    complete: true,
    notes: [],
    prototypes: [{ ...emptyPrototypeReport('7', 'p', 1), replacedCharacters: list.length, missingCharacters: list }],
  });
  const symbola = { name: 'Symbola', debian: 'fonts-symbola' };
  const cjk = { name: 'Noto Sans CJK', debian: 'fonts-noto-cjk' };

  it('lists the characters, names the font to install, and says plainly which stay ?', () => {
    const text = formatConvertTotals(
      reportWith([
        missing('🛒', { ...symbola, installed: false }),
        missing('日', { ...cjk, installed: true }),
        missing('🥰'),
      ]),
      'out',
    );
    expect(text.split('\n').slice(1)).toEqual([
      '3 characters drawn as ? for want of a font, in prototype 7 (the text stays searchable): U+1F6D2 🛒, U+65E5 日, U+1F970 🥰',
      'install Symbola (Debian: fonts-symbola) for U+1F6D2 🛒 and run the same convert again with --force, which replaces these documents',
      'Noto Sans CJK (Debian: fonts-noto-cjk) has U+65E5 日 and is installed, but fontconfig does not offer it here (fc-match -s sans-serif lists what it offers)',
      'no font known here has U+1F970 🥰: they stay ? (colour emoji fonts cannot be embedded in a PDF)',
    ]);
  });

  it('shows a dozen characters and counts the rest', () => {
    const list = [...'ก่ขคฆงจฉชซฌญฎฏ'].map((char) => missing(char));
    const text = formatConvertTotals(reportWith(list), 'out');
    expect(text).toContain(': U+0E01 ก, U+0E48 ่, U+0E02 ข,');
    expect(text).toContain('U+0E0D ญ and 2 more\n');
    expect(text).not.toMatch(/^install /m);
  });
});
