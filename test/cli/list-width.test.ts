import { describe, expect, it } from 'vitest';
import { DEFAULT_COLUMNS, formatListTable, terminalColumns, width } from '../../src/cli/format-archive.js';
import type { ListRow } from '../../src/verify/list-archive.js';

function row(id: string, name: string | null, complete = true): ListRow {
  return {
    id,
    name,
    revision: 12,
    pages: 104,
    layers: 3,
    elements: 20_480,
    discussions: 7,
    resources: 2_113,
    bytes: 123_456_789,
    errors: complete ? 0 : 4,
    complete,
  };
}

const rows = [
  row('3', 'Shop 🛒 <i>beta</i> & "friends" – 日本語 and a name far longer than any terminal'),
  row('1001', 'Dashboard prototype 1001', false),
  row('42', '兔子'.repeat(40)),
];

describe('ls fits the terminal', () => {
  it.each([50, 60, 80, 100, 120, 200])(
    'no line is wider than %i columns, and every row keeps id and status',
    (cols) => {
      const lines = formatListTable(rows, cols).split('\n');
      for (const line of lines) expect(width(line)).toBeLessThanOrEqual(cols);
      expect(lines[0]).toMatch(/^ID\s+NAME\s.*STATUS$/);
      expect(lines[2]).toMatch(/^1001\s.*incomplete$/);
    },
  );

  it('cuts long names with "…", counting wide characters as two columns', () => {
    const lines = formatListTable(rows, 80).split('\n');
    expect(lines[1]).toContain('…');
    const wide = lines[3] ?? '';
    expect(wide).toMatch(/兔…|子…/);
    expect(width(wide)).toBeLessThanOrEqual(80);
  });

  it('leaves out the least needed columns first, and shows all of them when there is room', () => {
    expect(formatListTable(rows, 80).split('\n')[0]).not.toContain('LAYERS');
    expect(formatListTable(rows, 300).split('\n')[0]).toMatch(
      /^ID\s+NAME\s+REV\s+PAGES\s+LAYERS\s+ELEMENTS\s+DISCUSSIONS\s+RESOURCES\s+SIZE\s+ERRORS\s+STATUS$/,
    );
  });

  it('names the columns it leaves out, and how to see them', () => {
    const narrow = formatListTable(rows, 80).split('\n');
    const header = narrow[0] ?? '';
    const titles = ['ID', 'NAME', 'REV', 'PAGES', 'LAYERS', 'ELEMENTS', 'DISCUSSIONS', 'RESOURCES', 'SIZE', 'ERRORS'];
    const hidden = titles.filter((title) => !new RegExp(`\\b${title}\\b`).test(header));
    expect(hidden).toEqual(['LAYERS', 'ELEMENTS', 'DISCUSSIONS']);
    // On one line at 80 columns, where it is met most: a hint cut in two is read in two.
    expect(narrow.at(-1)).toBe(`(hidden at 80 columns: ${hidden.join(', ')}; see all with --json)`);
    // Wrapped to the width like the rest, and absent when nothing is left out.
    for (const line of formatListTable(rows, 50).split('\n')) expect(width(line)).toBeLessThanOrEqual(50);
    expect(formatListTable(rows, 50)).toMatch(/hidden at 50 columns: [^]*with --json\)$/);
    expect(formatListTable(rows, 300)).not.toContain('hidden');
  });

  it('is 80 columns wide when the width is unknown: not a terminal and no COLUMNS', () => {
    expect(DEFAULT_COLUMNS).toBe(80);
    expect(terminalColumns({ isTTY: false }, {})).toBe(80);
    expect(terminalColumns({ isTTY: false }, { COLUMNS: '132' })).toBe(132);
    expect(terminalColumns({ isTTY: true, columns: 100 }, { COLUMNS: '132' })).toBe(100);
    expect(
      formatListTable(rows)
        .split('\n')
        .every((line) => width(line) <= 80),
    ).toBe(true);
  });
});

describe('width', () => {
  it('counts printable ASCII a column a character, and the rest by grapheme as before', () => {
    expect(width('prototype 1001  12.0 MiB')).toBe(24);
    expect(width('')).toBe(0);
    expect(width('日本')).toBe(4);
    expect(width('e\u0301')).toBe(1);
    expect(width('a\tb')).toBe(width('a') + width('\t') + width('b'));
  });
});
