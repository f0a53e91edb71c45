import { join } from 'node:path';
import { svgFileOf, svgPage } from '../svg-pages.js';
import { makeFolder, writeAtomically } from '../write-output.js';
import type { DocumentFormat } from './document-format.js';

/** A folder per prototype of one standalone SVG per page (svg-pages.ts), linked to each other. */
export const svg: DocumentFormat = {
  name: 'svg',
  help: 'a folder per prototype, one SVG per page',
  written: 'folders of SVG pages',
  exampleOut: 'team-svg',
  withoutPages: false,
  async write({ plan, pages, text, report, out, stem, dangling }) {
    await makeFolder(join(out, stem));
    const fileOfPage = new Map(plan.pages.map((page, index) => [page.id, svgFileOf(index + 1, page.id)]));
    for await (const content of pages) {
      const { xml, stats } = svgPage(content, fileOfPage, text);
      await writeAtomically(join(out, stem, fileOfPage.get(content.page.id) as string), [xml]);
      report.shapes += stats.shapes;
      report.links += stats.links;
      report.discussions += content.discussions.length;
      for (const target of stats.danglingTargets) dangling(content.page.id, target);
    }
    return stem;
  },
};
