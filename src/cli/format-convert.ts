import { join } from 'node:path';
import { formatNamed } from '../convert/formats/registry.js';
import type { ConvertReport, MissingCharacter, PrototypeReport } from '../convert/report.js';
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

/**
 * Which prototypes lost glyphs and which characters; then, for the characters a known font has,
 * that font to install, or, when it is installed already, that fontconfig does not offer it (so
 * an installed package is never the advice); the others are said plainly to stay `?`.
 */
function replacedTotals(report: ConvertReport): string {
  const short = report.prototypes.filter((p) => p.replacedCharacters > 0);
  if (short.length === 0) return '';
  const count = short.reduce((sum, p) => sum + p.replacedCharacters, 0);
  const characters = new Map<string, MissingCharacter>();
  for (const p of short) for (const m of p.missingCharacters ?? []) characters.set(m.codePoint, m);
  const byFont = new Map<string, { font: MissingCharacter['font']; list: MissingCharacter[] }>();
  for (const m of characters.values()) {
    const key = m.font === undefined ? '' : m.font.debian;
    const group = byFont.get(key) ?? { font: m.font, list: [] };
    group.list.push(m);
    byFont.set(key, group);
  }
  const lines = [
    `${plural(count, 'character')} drawn as ? for want of a font, in prototype${short.length === 1 ? '' : 's'} ` +
      `${short.map((p) => p.id).join(', ')} (the text stays searchable): ${characterList([...characters.values()])}`,
  ];
  for (const { font, list } of byFont.values()) {
    if (font === undefined) continue;
    const named = `${font.name} (Debian: ${font.debian})`;
    lines.push(
      font.installed
        ? `${named} has ${characterList(list)} and is installed, but fontconfig does not offer it here (fc-match -s sans-serif lists what it offers)`
        : // --force: this run's documents are in --out now, and the same command alone is refused for them.
          `install ${named} for ${characterList(list)} and run the same convert again with --force, which replaces these documents`,
    );
  }
  const unknown = byFont.get('')?.list;
  if (unknown !== undefined) {
    const emoji = unknown.some((m) => /\p{Extended_Pictographic}/u.test(m.character));
    lines.push(
      `no font known here has ${characterList(unknown)}: they stay ?` +
        (emoji ? ' (colour emoji fonts cannot be embedded in a PDF)' : ''),
    );
  }
  return lines.map((line) => `\n${line}`).join('');
}

/**
 * `U+1F6D2 🛒, U+00E9 é`: at most LISTED, then how many more (convert-report.json has them all);
 * with `counted`, how often each was replaced when more than once (`U+1F6D2 🛒 x2`).
 */
function characterList(list: readonly MissingCharacter[], counted = false): string {
  const count = (m: MissingCharacter): string => (counted && m.count > 1 ? ` x${m.count}` : '');
  const shown = list.slice(0, LISTED).map((m) => `${m.codePoint} ${printable(m.character)}${count(m)}`);
  return shown.join(', ') + (list.length > LISTED ? ` and ${list.length - LISTED} more` : '');
}

const LISTED = 12;

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
  if (p.replacedCharacters > 0) {
    const which = p.missingCharacters === undefined ? '' : `: ${characterList(p.missingCharacters, true)}`;
    lines.push(`    ${plural(p.replacedCharacters, 'character')} no font here has drawn as ?${which}`);
  }
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
