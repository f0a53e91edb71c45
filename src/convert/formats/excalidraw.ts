import { TOOL_NAME, TOOL_VERSION } from '../../core/version.js';
import { excalidrawFileOf, excalidrawScene } from '../excalidraw-scene.js';
import type { DocumentFormat } from './document-format.js';
import { writePageFolder } from './page-folder.js';

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
  write(job) {
    return writePageFolder(job, excalidrawFileOf, (content, fileOfPage) => {
      const { json, stats } = excalidrawScene(content, fileOfPage, `${TOOL_NAME} ${TOOL_VERSION}`);
      return { body: json, stats };
    });
  },
};
