import { checkWacz } from '../wacz/check-wacz.js';
import { writeWacz } from '../wacz/write-wacz.js';
import type { ArchiveFormat } from './archive-format.js';

/**
 * One WACZ of the whole archive (wacz/write-wacz.ts): what the service served, under the URLs it
 * served it from, for ReplayWeb.page and the tools of web archives to replay and ingest.
 */
export const wacz: ArchiveFormat = {
  name: 'wacz',
  help: 'one WACZ web archive of everything the service served, for ReplayWeb.page and web archives',
  written: 'a WACZ web archive',
  exampleOut: 'team-wacz',
  serializations: [],
  writePackage: writeWacz,
  checkPackage: checkWacz,
};
