import { svgFileOf, svgPage } from '../svg-pages.js';
import type { DocumentFormat } from './document-format.js';
import { writePageFolder } from './page-folder.js';

/** A folder per prototype of one standalone SVG per page (svg-pages.ts), linked to each other. */
export const svg: DocumentFormat = {
  name: 'svg',
  help: 'a folder per prototype, one SVG per page',
  written: 'folders of SVG pages',
  exampleOut: 'team-svg',
  withoutPages: false,
  write(job) {
    return writePageFolder(job, svgFileOf, (content, fileOfPage) => {
      const { xml, stats } = svgPage(content, fileOfPage, job.text);
      return { body: xml, stats };
    });
  },
};
