import { join } from 'node:path';
import { TOOL_VERSION } from '../../core/version.js';
import { diagramXml, mxfileClose, mxfileOpen } from '../drawio-xml.js';
import { addCounts } from '../report.js';
import { writeAtomically } from '../write-output.js';
import type { DocumentFormat } from './document-format.js';
import { countPage } from './page-folder.js';

/** One editable draw.io document per prototype, a diagram per page, streamed page by page. */
export const drawio: DocumentFormat = {
  name: 'drawio',
  help: 'one editable draw.io document per prototype',
  written: 'draw.io documents',
  exampleOut: 'team-drawio',
  withoutPages: false,
  async write(job) {
    const file = `${job.stem}.drawio`;
    const chunks = (async function* (): AsyncGenerator<string> {
      yield mxfileOpen(TOOL_VERSION, job.text);
      for await (const content of job.pages) {
        const { xml, stats } = diagramXml({ ...content, pageIds: job.plan.pageIds }, job.text);
        countPage(job, content, stats);
        addCounts(job.report.genericTypes, stats.generic);
        yield xml;
      }
      yield mxfileClose();
    })();
    await writeAtomically(join(job.out, file), chunks);
    return file;
  },
};
