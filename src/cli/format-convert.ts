import type { ConvertReport, PrototypeReport } from '../convert/report.js';
import { printable } from './format.js';

/** The console summary of a convert run: one block per prototype, then the totals. */
export function formatConvertReport(report: ConvertReport, out: string): string {
  const lines: string[] = [];
  for (const prototype of report.prototypes) lines.push(...prototypeLines(prototype));
  const written = report.prototypes.filter((p) => p.file !== null).length;
  const incomplete = report.prototypes.filter((p) => !p.complete).length;
  lines.push(
    `${written} of ${report.prototypes.length} prototypes written to ${printable(out)} as draw.io documents; report: convert-report.json` +
      (incomplete > 0 ? `; ${incomplete} not fully converted (see skipped above)` : ''),
  );
  return lines.join('\n');
}

function prototypeLines(p: PrototypeReport): string[] {
  const head = `${p.complete ? 'ok ' : 'INCOMPLETE'} ${p.id} ${printable(p.name ?? '(no name)')} -> ${p.file === null ? '(no file)' : printable(p.file)}`;
  const counts = `    ${p.pages} pages, ${p.shapes} shapes, ${p.links} links, ${p.discussions} discussions`;
  const lines = [head, counts];
  const generic = Object.entries(p.genericTypes);
  if (generic.length > 0) {
    lines.push(`    drawn as plain rectangles: ${generic.map(([type, count]) => `${printable(type)} x${count}`).join(', ')}`);
  }
  if (p.droppedCharacters > 0) lines.push(`    ${p.droppedCharacters} characters XML cannot hold were dropped`);
  for (const s of p.skipped) lines.push(`    skipped ${printable(s.what)}: ${printable(s.why)}`);
  for (const n of p.notes) lines.push(`    note: ${printable(n.what)} ${printable(n.why)}`);
  return lines;
}
