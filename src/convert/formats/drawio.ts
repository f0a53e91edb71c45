import { join } from 'node:path';
import { TOOL_VERSION } from '../../core/version.js';
import { diagramXml, mxfileClose, mxfileOpen } from '../drawio-xml.js';
import { addCounts } from '../report.js';
import { writeAtomically } from '../write-output.js';
import type { DocumentFormat } from './document-format.js';

/** One editable draw.io document per prototype, a diagram per page, streamed page by page. */
export const drawio: DocumentFormat = {
  name: 'drawio',
  help: 'one editable draw.io document per prototype',
  written: 'draw.io documents',
  exampleOut: 'team-drawio',
  withoutPages: false,
  async write({ plan, pages, text, report, out, stem, dangling }) {
    const file = `${stem}.drawio`;
    const chunks = (async function* (): AsyncGenerator<string> {
      yield mxfileOpen(TOOL_VERSION, text);
      for await (const content of pages) {
        const { xml, stats } = diagramXml({ ...content, pageIds: plan.pageIds }, text);
        report.shapes += stats.shapes;
        report.links += stats.links;
        report.discussions += content.discussions.length;
        addCounts(report.genericTypes, stats.generic);
        for (const target of stats.danglingTargets) dangling(content.page.id, target);
        yield xml;
      }
      yield mxfileClose();
    })();
    await writeAtomically(join(out, file), chunks);
    return file;
  },
};
