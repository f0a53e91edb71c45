import { basename } from 'node:path';
import type { ListRow } from '../verify/list-archive.js';
import type { VerifyProblem, VerifyReport } from '../verify/verify-archive.js';
import { damagedArchiveNext, damagedArchiveStep } from './damaged-archive.js';
import { plural } from './format.js';
import { printable } from './terminal-text.js';

/** Pure text for `ls` and `verify`; the command prints it. Names come from the service: untrusted. */

/** The narrowest a name is cut to before whole columns are left out instead. */
const MIN_NAME_WIDTH = 16;

/** Terminal width when it is not known (a pipe, a log, no COLUMNS): what every terminal has. */
export const DEFAULT_COLUMNS = 80;

/** The width to lay the table out for: the terminal's, else COLUMNS, else 80. */
export function terminalColumns(stream: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv): number {
  if (stream.isTTY && stream.columns !== undefined && stream.columns > 0) return stream.columns;
  const fromEnv = Number(env['COLUMNS']);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_COLUMNS;
}

interface Column {
  title: string;
  numeric: boolean;
  /** Columns with the lowest value are left out first when the table does not fit. */
  keep: number;
  cell: (row: ListRow) => string;
}

const COLUMNS: readonly Column[] = [
  { title: 'ID', numeric: false, keep: 100, cell: (row) => row.id },
  { title: 'NAME', numeric: false, keep: 100, cell: (row) => (row.name === null ? '-' : clean(row.name)) },
  { title: 'REV', numeric: true, keep: 4, cell: (row) => (row.revision === null ? '-' : String(row.revision)) },
  { title: 'PAGES', numeric: true, keep: 6, cell: (row) => String(row.pages) },
  { title: 'LAYERS', numeric: true, keep: 1, cell: (row) => String(row.layers) },
  { title: 'ELEMENTS', numeric: true, keep: 3, cell: (row) => String(row.elements) },
  { title: 'DISCUSSIONS', numeric: true, keep: 2, cell: (row) => String(row.discussions) },
  { title: 'RESOURCES', numeric: true, keep: 5, cell: (row) => String(row.resources) },
  { title: 'SIZE', numeric: true, keep: 7, cell: (row) => size(row.bytes) },
  { title: 'ERRORS', numeric: true, keep: 8, cell: (row) => String(row.errors) },
  { title: 'STATUS', numeric: false, keep: 100, cell: (row) => (row.complete ? 'complete' : 'incomplete') },
];

const GAP = 2;

/**
 * The table of prototypes, at most `columns` wide: long names are cut with "…" down to
 * MIN_NAME_WIDTH, then the least needed columns go (layers first), so it never wraps.
 */
export function formatListTable(rows: ListRow[], columns = DEFAULT_COLUMNS): string {
  const cells = rows.map((row) => COLUMNS.map((column) => column.cell(row)));
  const natural = COLUMNS.map((column, index) =>
    Math.max(width(column.title), ...cells.map((line) => width(line[index] ?? ''))),
  );
  const nameIndex = COLUMNS.findIndex((column) => column.title === 'NAME');
  let shown = COLUMNS.map((_, index) => index);
  const others = (list: number[]): number =>
    list.reduce((sum, index) => sum + (index === nameIndex ? 0 : (natural[index] ?? 0)), 0) + GAP * (list.length - 1);
  while (others(shown) + Math.min(MIN_NAME_WIDTH, natural[nameIndex] ?? 0) > columns) {
    const droppable = shown.filter((index) => (COLUMNS[index]?.keep ?? 100) < 100);
    if (droppable.length === 0) break;
    const drop = droppable.reduce((min, index) =>
      (COLUMNS[index]?.keep ?? 0) < (COLUMNS[min]?.keep ?? 0) ? index : min,
    );
    shown = shown.filter((index) => index !== drop);
  }
  const nameWidth = Math.max(MIN_NAME_WIDTH, Math.min(natural[nameIndex] ?? 0, columns - others(shown)));
  const widths = natural.map((w, index) => (index === nameIndex ? Math.min(w, nameWidth) : w));
  const table = [
    COLUMNS.map((column) => column.title),
    ...cells.map((line) => line.map((cell, index) => (index === nameIndex ? fit(cell, nameWidth) : cell))),
  ];
  const lines = table.map((line) =>
    shown
      .map((index) => {
        const cell = line[index] ?? '';
        const pad = ' '.repeat(Math.max(0, (widths[index] ?? 0) - width(cell)));
        return COLUMNS[index]?.numeric ? pad + cell : cell + pad;
      })
      .join(' '.repeat(GAP))
      .trimEnd(),
  );
  const incomplete = rows.filter((row) => !row.complete).length;
  const summary =
    rows.length === 0
      ? 'no prototypes in this archive'
      : plural(rows.length, 'prototype') + (incomplete > 0 ? `, ${incomplete} incomplete` : ', all complete');
  const hidden = COLUMNS.filter((_, index) => !shown.includes(index)).map((column) => column.title);
  // A column left out silently reads as data the archive lacks: say which, and where to see them.
  const note =
    hidden.length === 0
      ? []
      : wrap(`(hidden at ${columns} columns: ${hidden.join(', ')}; see all with --json)`, columns);
  return [...lines, '', summary, ...note].join('\n');
}

/** Words laid into lines of at most `columns` (a word longer than that gets a line of its own). */
function wrap(text: string, columns: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && width(line) + 1 + width(word) > columns) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  return [...lines, line];
}

/** The file as a whole differs from the sha256 its sidecar records (verify's `.sha256` check). */
export interface SidecarMismatch {
  sidecar: string;
  actual: string;
  expected: string;
}

/**
 * verify's verdict, one line last. A sidecar that does not match makes it FAILED even when every
 * entry inside checks: the file is not the one that was written.
 */
export function formatVerifyReport(report: VerifyReport, mismatch?: SidecarMismatch): string {
  const name = clean(basename(report.path));
  const unreadable = report.problems.find((p) => p.kind === 'not-a-zip');
  // A file that is no zip at all has one thing wrong with it: say it in one line.
  if (unreadable) return `FAILED: ${clean(unreadable.detail)}`;
  const kindWidth = report.problems.reduce((width, p) => Math.max(width, p.kind.length), 0);
  const lines = report.problems.map((problem) => formatProblem(problem, kindWidth));
  const unlisted = report.problemCount - report.problems.length;
  if (unlisted > 0) lines.push(`  … and ${unlisted} more problem${unlisted === 1 ? '' : 's'}, not listed`);
  const checked = `${report.checked} entr${report.checked === 1 ? 'y' : 'ies'}, ${megabytes(report.bytes)} checked`;
  const against = mismatch
    ? `the file does not match ${clean(mismatch.sidecar)}: its sha256 is ${mismatch.actual}, the sidecar says ${mismatch.expected}`
    : undefined;
  if (!report.ok) {
    const count = report.problemCount;
    lines.push(`FAILED: ${name} has ${count} problem${count === 1 ? '' : 's'} (${checked})`);
    if (against) lines.push(`FAILED: ${against}`);
  } else if (against) {
    lines.push(`FAILED: ${against}; every entry inside checks (${checked}), so the file was changed or replaced`);
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

/**
 * What to do about an archive verify failed, in the words a reader that refuses it prints
 * (damaged-archive.ts), less the pointer to verify: undefined when it passed, or when what stopped
 * it names no archive file (a path that does not exist, a folder).
 */
export function verifyNextStep(report: VerifyReport, mismatch?: SidecarMismatch): string | undefined {
  if (report.ok && mismatch === undefined) return undefined;
  if (report.stoppedBy !== undefined) return damagedArchiveNext(report.stoppedBy, { verify: false });
  const foreign = report.problems.some((problem) => CRAFTED.has(problem.kind));
  return damagedArchiveStep({ archive: report.path, verify: false, foreign });
}

/** Problems no damage to a copy makes: the zip was put together otherwise than an export writes one. */
const CRAFTED: ReadonlySet<VerifyProblem['kind']> = new Set([
  'unlisted',
  'duplicate',
  'unsafe-name',
  'not-a-file',
  'overlap',
]);

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

/** One printable line for a table: printable (terminal-text.ts), runs of breaks one space, trimmed. */
export function clean(text: string): string {
  return printable(text.replace(/[\r\n\t]+/g, ' ')).trim();
}

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
const PLAIN_ASCII = /^[\x20-\x7e]*$/;

/**
 * Terminal columns of a string: wide for emoji and East Asian wide characters, zero for marks.
 * Printable ASCII is one column a character and needs no segmenting: each segmenting takes native
 * memory of ICU's that only a collection gives back, which a table of thousands of rows (ls of an
 * account of many small prototypes) held by the hundred megabytes.
 */
export function width(text: string): number {
  if (PLAIN_ASCII.test(text)) return text.length;
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
