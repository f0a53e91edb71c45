import { describe, expect, it } from 'vitest';
import { clean, formatListTable, formatVerifyReport, width } from '../../src/cli/format-archive.js';
import type { ListRow } from '../../src/verify/list-archive.js';
import type { VerifyReport } from '../../src/verify/verify-archive.js';
import { sampleManifest } from './sample-archive.js';

const row = (id: string, name: string | null, complete = true): ListRow => ({
  id,
  name,
  revision: id === '7' ? null : 17,
  pages: 12,
  layers: 3,
  elements: 140,
  discussions: 2,
  resources: 171,
  bytes: 3 * 1024 * 1024 + 512 * 1024,
  errors: complete ? 0 : 4,
  complete,
});

describe('clean and width', () => {
  it.each([
    { text: 'Shop\nCheckout\tv2', out: 'Shop Checkout v2' },
    { text: 'evil\u202Egnp.exe', out: 'evil<U+202E>gnp.exe' },
    { text: 'bell\u0007', out: 'bell<U+0007>' },
    { text: 'a\u2066b\u2069c\u200Fd\u061Ce\u200Bf', out: 'a<U+2066>b<U+2069>c<U+200F>d<U+061C>e<U+200B>f' },
    { text: 'tag\u{E0041}', out: 'tag<U+E0041>' },
    { text: 'family 👨‍👩‍👧', out: 'family 👨‍👩‍👧' },
  ])('cleans $text', ({ text, out }) => {
    expect(clean(text)).toBe(out);
  });

  it.each([
    { text: 'abc', columns: 3 },
    { text: '🐇', columns: 2 },
    { text: '👨‍👩‍👧', columns: 2 },
    { text: 'e\u0301', columns: 1 },
    { text: '兔子', columns: 4 },
  ])('measures $text as $columns columns', ({ text, columns }) => {
    expect(width(text)).toBe(columns);
  });
});

describe('formatListTable', () => {
  it('aligns columns whatever the names hold', () => {
    const rows = [row('12', 'Shop 🛒\nnew line'), row('4711', '兔子 prototype', false), row('7', null, false)];
    const lines = formatListTable(rows, 200).split('\n');
    expect(lines[0]).toMatch(
      /^ID\s+NAME\s+REV\s+PAGES\s+LAYERS\s+ELEMENTS\s+DISCUSSIONS\s+RESOURCES\s+SIZE\s+ERRORS\s+STATUS$/,
    );
    const table = lines.slice(0, 4);
    // The last column (STATUS) starts at the same terminal column on every line.
    const statusStarts = table.map((line) => width(line.slice(0, line.search(/(STATUS|incomplete|complete)$/))));
    expect(table).toHaveLength(4);
    expect(new Set(statusStarts).size).toBe(1);
    expect(formatListTable(rows)).not.toMatch(/\n.*new line\n/); // the newline did not split the row
    expect(lines).toContain('3 prototypes, 2 incomplete');
  });

  it('cuts very long names at a grapheme boundary', () => {
    const out = formatListTable([row('1', '🐇'.repeat(50))], 120);
    const line = out.split('\n')[1] ?? '';
    expect(line).toMatch(/🐇…/);
    expect(width(line)).toBeLessThanOrEqual(120);
  });

  it('says so when there are no prototypes', () => {
    expect(formatListTable([])).toMatch(/no prototypes/);
  });
});

describe('formatVerifyReport', () => {
  const base: VerifyReport = {
    ok: true,
    path: '/tmp/x/export.zip',
    manifest: sampleManifest(),
    checked: 19,
    bytes: 5 * 1024 * 1024,
    problems: [],
    problemCount: 0,
  };

  it('prints one line per problem naming the entry, then a verdict', () => {
    const report: VerifyReport = {
      ...base,
      ok: false,
      problemCount: 2,
      problems: [
        { kind: 'missing', path: 'prototypes/1/r1/pages.json', detail: 'listed in the manifest but not in the zip' },
        {
          kind: 'crc-error',
          path: 'prototypes/1/r1/pages/page1.png',
          detail: 'damaged: CRC-32 00000000 instead of 12345678',
        },
      ],
    };
    const lines = formatVerifyReport(report).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\s+missing\s+prototypes\/1\/r1\/pages\.json: listed/);
    expect(lines[1]).toMatch(/^\s+crc-error\s+prototypes\/1\/r1\/pages\/page1\.png: damaged/);
    expect(lines[2]).toBe('FAILED: export.zip has 2 problems (19 entries, 5.0 MiB checked)');
  });

  it.each([
    { complete: true, verdict: /^OK: export\.zip is intact and complete/ },
    { complete: false, verdict: /^OK, BUT INCOMPLETE: export\.zip is intact/ },
  ])('gives a one-line verdict for an intact archive (complete: $complete)', ({ complete, verdict }) => {
    const report = { ...base, manifest: { ...sampleManifest(), complete } };
    expect(formatVerifyReport(report)).toMatch(verdict);
    expect(formatVerifyReport(report).split('\n')).toHaveLength(1);
  });
});
