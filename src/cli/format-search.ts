import { printable } from '../search/hit-context.js';
import { recordLine } from './json-records.js';
import type { SearchHit, SearchSummary } from '../search/search-archive.js';

/** The most a name may take of a hit's line: the archive's names are hostile, and can be of any length. */
const NAME_CHARS = 80;

/**
 * One hit as three lines: where it is (prototype › page › layer › element), the match in its
 * context, and the archive entry that shows it. Every value is the archive's and goes through
 * `printable`: no control character reaches the terminal.
 */
export function formatHit(hit: SearchHit, color: boolean): string {
  const name = (text: string | null, fallback: string) =>
    text === null || text === '' ? fallback : printable(text, NAME_CHARS);
  const where = [`${name(hit.prototype.name, `Prototype ${hit.prototype.id}`)} (${hit.prototype.id})`];
  if (hit.page) where.push(`${name(hit.page.name, hit.page.id)} (${printable(hit.page.id, NAME_CHARS)})`);
  if (hit.layer) where.push(`layer ${name(hit.layer.name, hit.layer.id)}`);
  const what =
    hit.kind === 'element' || hit.kind === 'discussion' ? `${hit.kind} ${printable(hit.id, NAME_CHARS)}` : hit.kind;
  const field = hit.field === 'name' ? '' : ` ${printable(hit.field, NAME_CHARS)}`;
  const [open, close] = color ? ['\u001b[7m', '\u001b[27m'] : ['«', '»'];
  return (
    `${where.join(' › ')}: ${what}${field}\n` +
    `  ${printable(hit.before)}${open}${printable(hit.match)}${close}${printable(hit.after)}\n` +
    `  ${printable(hit.target, 500)}\n`
  );
}

/** One hit record; the archive's strings are escaped as for the terminal, since a line of JSON is often read on one. */
export function jsonHit(hit: SearchHit): string {
  return recordLine('search', 'hit', { ...hit, field: hit.field.slice(0, NAME_CHARS) });
}

export function formatSummary(summary: SearchSummary): string {
  const { hits, prototypes, indexed, scanned } = summary;
  const how =
    scanned === 0
      ? 'through the search index'
      : indexed === 0
        ? 'reading their files (this archive has no search index)'
        : `${indexed} through the search index, ${scanned} reading their files`;
  return `${hits} hit${hits === 1 ? '' : 's'} in ${prototypes} prototype${prototypes === 1 ? '' : 's'}, searched ${how}.\n`;
}

/** The last record: a search that ran is ok with or without hits (exit 0). */
export function jsonSummary(summary: SearchSummary): string {
  return recordLine('search', 'summary', { ok: true, exitCode: 0, ...summary });
}
