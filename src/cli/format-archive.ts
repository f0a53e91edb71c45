import { basename } from 'node:path';
import type { ListRow } from '../verify/list-archive.js';
import type { VerifyProblem, VerifyReport } from '../verify/verify-archive.js';

/** Pure text for `ls` and `verify`; the command prints it. Names come from the service: untrusted. */

/** Longest name shown in the table, in terminal columns; the rest is cut with an ellipsis. */
const NAME_WIDTH = 40;

export function formatListTable(rows: ListRow[]): string {
  const header = [
    'ID',
    'NAME',
    'REV',
    'PAGES',
    'LAYERS',
    'ELEMENTS',
    'DISCUSSIONS',
    'RESOURCES',
    'SIZE',
    'ERRORS',
    'STATUS',
  ];
  const numeric = new Set([2, 3, 4, 5, 6, 7, 8, 9]);
  const body = rows.map((row) => [
    row.id,
    row.name === null ? '-' : fit(clean(row.name), NAME_WIDTH),
    row.revision === null ? '-' : String(row.revision),
    String(row.pages),
    String(row.layers),
    String(row.elements),
    String(row.discussions),
    String(row.resources),
    size(row.bytes),
    String(row.errors),
    row.complete ? 'complete' : 'incomplete',
  ]);
  const table = [header, ...body];
  const widths = header.map((_, column) => Math.max(...table.map((cells) => width(cells[column] ?? ''))));
  const lines = table.map((cells) =>
    cells
      .map((cell, column) => {
        const pad = ' '.repeat((widths[column] ?? 0) - width(cell));
        return numeric.has(column) ? pad + cell : cell + pad;
      })
      .join('  ')
      .trimEnd(),
  );
  const incomplete = rows.filter((row) => !row.complete).length;
  const summary =
    rows.length === 0
      ? 'no prototypes in this archive'
      : `${rows.length} prototype${rows.length === 1 ? '' : 's'}` +
        (incomplete > 0 ? `, ${incomplete} incomplete` : ', all complete');
  return [...lines, '', summary].join('\n');
}

export function formatVerifyReport(report: VerifyReport): string {
  const name = clean(basename(report.path));
  const unreadable = report.problems.find((p) => p.kind === 'not-a-zip');
  // A file that is no zip at all has one thing wrong with it: say it in one line.
  if (unreadable) return `FAILED: ${clean(unreadable.detail)}`;
  const kindWidth = Math.max(0, ...report.problems.map((p) => p.kind.length));
  const lines = report.problems.map((problem) => formatProblem(problem, kindWidth));
  const checked = `${report.checked} entr${report.checked === 1 ? 'y' : 'ies'}, ${megabytes(report.bytes)} checked`;
  if (!report.ok) {
    const count = report.problems.length;
    lines.push(`FAILED: ${name} has ${count} problem${count === 1 ? '' : 's'} (${checked})`);
  } else if (report.manifest && !report.manifest.complete) {
    const errors = report.manifest.errors.length;
    lines.push(
      `OK, BUT INCOMPLETE: ${name} is intact (${checked}), but the export did not get everything: ` +
        `the manifest records ${errors} error${errors === 1 ? '' : 's'}`,
    );
  } else {
    lines.push(`OK: ${name} is intact and complete (${checked})`);
  }
  return lines.join('\n');
}

function formatProblem(problem: VerifyProblem, kindWidth: number): string {
  const where = problem.path === undefined ? '' : `${clean(problem.path)}: `;
  return `  ${problem.kind.padEnd(kindWidth)}  ${where}${clean(problem.detail)}`;
}

/** 512 B, 3.4 KiB, 12.0 MiB, 1.2 GiB: a column a person compares at a glance. */
export function size(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

function megabytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${bytes} bytes` : `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * One printable line: newlines and tabs become spaces, other control and format characters
 * (including bidi overrides that could make a name read as something else) become U+FFFD.
 * The zero-width joiner stays so emoji sequences survive.
 */
export function clean(text: string): string {
  return text
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/(?!\u200d)[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/gu, '\ufffd')
    .trim();
}

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** Terminal columns of a string: wide for emoji and East Asian wide characters, zero for marks. */
export function width(text: string): number {
  let total = 0;
  for (const { segment } of segmenter.segment(text)) total += clusterWidth(segment);
  return total;
}

function clusterWidth(cluster: string): number {
  if (/^[\p{Mn}\p{Me}\p{Cf}]+$/u.test(cluster)) return 0;
  if (
    /\p{Extended_Pictographic}/u.test(cluster) &&
    (/\p{Emoji_Presentation}/u.test(cluster) || cluster.includes('\ufe0f'))
  ) {
    return 2;
  }
  const code = cluster.codePointAt(0) ?? 0;
  const wide =
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf && code !== 0x303f) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x20000 && code <= 0x3fffd);
  return wide ? 2 : 1;
}

/** Cuts at a grapheme boundary so an emoji or accented letter is never split. */
function fit(text: string, columns: number): string {
  if (width(text) <= columns) return text;
  let out = '';
  let used = 0;
  for (const { segment } of segmenter.segment(text)) {
    const w = clusterWidth(segment);
    if (used + w > columns - 1) break;
    out += segment;
    used += w;
  }
  return `${out}…`;
}
