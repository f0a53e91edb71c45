import { join } from 'node:path';
import { prototypeHead } from '../page-walk.js';
import { writeAtomically } from '../write-output.js';
import type { DocumentFormat } from './document-format.js';

/** One PDF binder per prototype (pdf-binder.ts): a title page, then the pages with searchable labels. */
export const pdf: DocumentFormat = {
  name: 'pdf',
  help: 'one PDF binder per prototype',
  written: 'PDF binders',
  exampleOut: 'team-pdf',
  withoutPages: true,
  async write({ reader, plan, pages, text, report, out, stem, dangling }) {
    // pdf-lib is loaded only when a binder is asked for, not for every start of the command line.
    const { pdfBinder } = await import('../pdf-binder.js');
    const file = `${stem}.pdf`;
    const head = await prototypeHead(reader);
    const { bytes, stats } = await pdfBinder(head, plan, pages, text);
    await writeAtomically(join(out, file), [bytes]);
    report.shapes += stats.labels;
    report.links += stats.links;
    report.discussions += stats.discussions;
    for (const { pageId, ...target } of stats.danglingTargets) dangling(pageId, target);
    return file;
  },
};
