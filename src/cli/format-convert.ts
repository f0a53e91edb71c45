import { join } from 'node:path';
import { formatNamed } from '../convert/formats/registry.js';
import type { ConvertReport, PrototypeReport } from '../convert/report.js';
import { plural, printable } from './format.js';

/** The closing line of a convert run, after each prototype's block has been printed. */
export function formatConvertTotals(report: ConvertReport, out: string): string {
  if (report.package !== undefined) return packageTotals(report, out);
  const written = report.prototypes.filter((p) => p.file !== null).length;
  const incomplete = report.prototypes.filter((p) => !p.complete).length;
  const notes = report.notes.map((note) => `note: ${printable(note)}\n`).join('');
  return (
    notes +
    `${written} of ${report.prototypes.length} prototypes written to ${printable(out)} as ${formatNamed(report.to).written}; report: convert-report.json` +
    (incomplete > 0 ? `; ${incomplete} not fully converted (see skipped above)` : '') +
    replacedTotals(report)
  );
}

/** The closing line of a package (wacz, bagit): what it holds, and whether it was read back. */
function packageTotals(report: ConvertReport, out: string): string {
  const p = report.package as NonNullable<ConvertReport['package']>;
  const notes = report.notes.map((note) => `note: ${printable(note)}\n`).join('');
  const pages = p.pages > 0 ? `, ${plural(p.pages, 'page')} listed for replay` : '';
  const checked =
    p.checked === undefined
      ? ''
      : `; read back: ${plural(p.checked.files, 'file')} and ${plural(p.checked.entries, 'entry', 'entries')} match`;
  return (
    notes +
    `${printable(join(out, p.file))}: ${formatNamed(report.to).written} of ${plural(p.entries, 'body', 'bodies')} (${(p.bytes / 1024 / 1024).toFixed(1)} MiB)${pages}${checked}; report: convert-report.json`
  );
}

/** Which prototypes lost glyphs for want of a font, and how to get them back. */
function replacedTotals(report: ConvertReport): string {
  const short = report.prototypes.filter((p) => p.replacedCharacters > 0);
  if (short.length === 0) return '';
  const count = short.reduce((sum, p) => sum + p.replacedCharacters, 0);
  return (
    `\n${plural(count, 'character')} drawn as ? for want of a font, in prototype${short.length === 1 ? '' : 's'} ` +
    `${short.map((p) => p.id).join(', ')} (the text stays searchable); install fonts that have them ` +
    // --force: the documents of this run are in --out now, and a plain rerun would be refused for them.
    '(Debian: fonts-noto-core fonts-noto-cjk) and run the same convert again with --force, which replaces these documents'
  );
}

/** One prototype's block: printed as soon as it is converted, so a long run shows its progress. */
export function formatPrototypeConverted(p: PrototypeReport): string {
  return prototypeLines(p).join('\n');
}

function prototypeLines(p: PrototypeReport): string[] {
  const head = `${p.complete ? 'ok ' : 'INCOMPLETE'} ${p.id} ${printable(p.name ?? '(no name)')} -> ${p.file === null ? '(no file)' : printable(p.file)}`;
  const counts = `    ${plural(p.pages, 'page')}, ${plural(p.shapes, 'shape')}, ${plural(p.links, 'link')}, ${plural(p.discussions, 'discussion')}`;
  const lines = [head, counts];
  const generic = Object.entries(p.genericTypes);
  if (generic.length > 0) {
    lines.push(
      `    drawn as plain rectangles: ${generic.map(([type, count]) => `${printable(type)} x${count}`).join(', ')}`,
    );
  }
  if (p.droppedCharacters > 0) lines.push(`    ${p.droppedCharacters} characters XML cannot hold were dropped`);
  if (p.replacedCharacters > 0)
    lines.push(`    ${plural(p.replacedCharacters, 'character')} no font here has drawn as ?`);
  if (p.binder !== undefined) {
    lines.push(`    binder ${kib(p.binder.bytes)} for ${kib(p.binder.renderingBytes)} of page renderings`);
  }
  for (const s of p.skipped) lines.push(`    skipped ${printable(s.what)}: ${printable(s.why)}`);
  for (const n of p.notes) lines.push(`    note: ${printable(n.what)} ${printable(n.why)}`);
  return lines;
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}
