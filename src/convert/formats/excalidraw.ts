import { join } from 'node:path';
import { TOOL_NAME, TOOL_VERSION } from '../../core/version.js';
import { excalidrawFileOf, excalidrawScene } from '../excalidraw-scene.js';
import { makeFolder, writeAtomically } from '../write-output.js';
import type { DocumentFormat } from './document-format.js';

/**
 * A folder per prototype of one Excalidraw scene per page (excalidraw-scene.ts). One file per page
 * rather than one per prototype with a frame per page: each scene embeds its page's PNG, so a
 * file stays the size of one page, is written as the page is read, and opens quickly; pages link
 * to each other by file name, as the SVG pages do.
 */
export const excalidraw: DocumentFormat = {
  name: 'excalidraw',
  help: 'a folder per prototype, one Excalidraw scene per page',
  written: 'folders of Excalidraw scenes',
  exampleOut: 'team-excalidraw',
  withoutPages: false,
  async write({ plan, pages, report, out, stem, dangling }) {
    await makeFolder(join(out, stem));
    const fileOfPage = new Map(plan.pages.map((page, index) => [page.id, excalidrawFileOf(index + 1, page.id)]));
    for await (const content of pages) {
      const { json, stats } = excalidrawScene(content, fileOfPage, `${TOOL_NAME} ${TOOL_VERSION}`);
      await writeAtomically(join(out, stem, fileOfPage.get(content.page.id) as string), [json]);
      report.shapes += stats.shapes;
      report.links += stats.links;
      report.discussions += content.discussions.length;
      for (const target of stats.danglingTargets) dangling(content.page.id, target);
    }
    return stem;
  },
};
