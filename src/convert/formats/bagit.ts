import { checkBag } from '../bagit/check-bag.js';
import { SERIALIZATIONS, writeBag } from '../bagit/write-bag.js';
import type { ArchiveFormat } from './archive-format.js';

/**
 * One BagIt bag (RFC 8493) of the archive's entries (bagit/write-bag.ts): the payload with its
 * sha256 manifest, for records offices and repositories that take in bags; a folder, or one zip
 * or tar with `--serialize`.
 */
export const bagit: ArchiveFormat = {
  name: 'bagit',
  help: 'one BagIt bag (RFC 8493) of every entry of the archive, a folder or with --serialize a zip or tar',
  written: 'a BagIt bag',
  exampleOut: 'team-bag',
  serializations: SERIALIZATIONS,
  writePackage: writeBag,
  checkPackage: checkBag,
};
