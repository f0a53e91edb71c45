import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { prototypeHead } from '../page-walk.js';
import { writeAtomically } from '../write-output.js';
import type { MissingCharacter } from '../report.js';
import type { DocumentFormat } from './document-format.js';

/** One PDF binder per prototype (pdf-binder.ts): a title page, then the pages with searchable labels. */
export const pdf: DocumentFormat = {
  name: 'pdf',
  help: 'one PDF binder per prototype',
  written: 'PDF binders',
  exampleOut: 'team-pdf',
  withoutPages: true,
  async write({ reader, plan, pages, text, report, out, stem, dangling }) {
    // pdfkit and fontkit are loaded only when a binder is asked for, not for every start of the command line.
    const { pdfBinderChunks } = await import('../pdf-binder.js');
    const file = `${stem}.pdf`;
    const head = await prototypeHead(reader);
    // Written as it is made, a page at a time: memory follows the biggest page, not the prototype.
    const { chunks, stats } = pdfBinderChunks(head, plan, pages, text);
    await writeAtomically(join(out, file), chunks);
    report.shapes += stats.labels;
    report.links += stats.links;
    report.discussions += stats.discussions;
    report.replacedCharacters = stats.replacedCharacters;
    report.missingCharacters = await missingCharacters(stats.missingCharacters);
    const { size } = await stat(join(out, file));
    report.binder = { bytes: size, renderingBytes: stats.renderingBytes, fonts: stats.fonts };
    for (const { pageId, ...target } of stats.danglingTargets) dangling(pageId, target);
    return file;
  },
};

/** Each character replaced, with a font that has it where one is known (font-packages.ts). */
async function missingCharacters(missing: { character: string; count: number }[]): Promise<MissingCharacter[]> {
  if (missing.length === 0) return [];
  const { installedPackages, fontFor } = await import('../pdf/font-packages.js');
  const installed = await installedPackages();
  return missing.map(({ character, count }) => {
    const found = fontFor(character, installed);
    const codePoint = `U+${(character.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
    const font = found && { name: found.name, debian: found.debian, installed: found.installed };
    return { codePoint, character, count, ...(font ? { font } : {}) };
  });
}
