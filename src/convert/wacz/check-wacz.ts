import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { WARCParser } from 'warcio';
import { isRabbitError, RabbitError } from '../../core/errors.js';
import { openZip, type ZipReader } from '../../zip/zip-reader.js';
import type { PackageCheck } from '../formats/archive-format.js';
import { SortedLines } from './sorted-lines.js';
import { DATAPACKAGE, DATAPACKAGE_DIGEST } from './write-wacz.js';

/** Past this a datapackage is not one convert wrote. */
const MAX_DATAPACKAGE_BYTES = 16 * 1024 * 1024;

interface Resource {
  path: string;
  hash: string;
  bytes: number;
}

/**
 * Reads a WACZ back as a replayer would and checks what each part claims: the datapackage's
 * digest, each file's sha256 and size, each index line's offset and length landing on a record of
 * its URL whose payload has its digest, and each record's block and payload digests.
 */
export async function checkWacz(path: string, onChecked?: (entries: number) => void): Promise<PackageCheck> {
  try {
    return await checkZipped(path, onChecked);
  } catch (error) {
    // The zip's own checks (its CRCs, its structure) fail first on most damage: the package is what is wrong.
    if (isRabbitError(error) && (error.code === 'ARCHIVE_CORRUPT' || error.code === 'NOT_A_ZIP'))
      fail(`it cannot be read as it was written (${error.message})`);
    throw error;
  }
}

async function checkZipped(path: string, onChecked: ((entries: number) => void) | undefined): Promise<PackageCheck> {
  const zip = await openZip(path);
  let work: string | undefined;
  try {
    work = await mkdtemp(join(dirname(path), '.wacz-check-'));
    const datapackage = await zip
      .readEntry(DATAPACKAGE, MAX_DATAPACKAGE_BYTES)
      .catch(() => fail(`it has no ${DATAPACKAGE}`));
    const digest = parse(await zip.readEntry(DATAPACKAGE_DIGEST, MAX_DATAPACKAGE_BYTES), DATAPACKAGE_DIGEST);
    if (digest.hash !== `sha256:${sha256(datapackage)}`) fail(`${DATAPACKAGE_DIGEST} does not match ${DATAPACKAGE}`);
    const resources = resourcesOf(parse(datapackage, DATAPACKAGE));
    const listed = new Set([DATAPACKAGE, DATAPACKAGE_DIGEST, ...resources.map((resource) => resource.path)]);
    for (const name of zip.entries.keys())
      if (!listed.has(name)) fail(`it holds ${JSON.stringify(name)}, which ${DATAPACKAGE} does not list`);
    for (const resource of resources) {
      const hash = createHash('sha256');
      let bytes = 0;
      for await (const chunk of await zip.openEntry(resource.path)) {
        hash.update(chunk as Buffer);
        bytes += (chunk as Buffer).length;
      }
      if (`sha256:${hash.digest('hex')}` !== resource.hash || bytes !== resource.bytes)
        fail(`${resource.path} does not match its sha256 or size in ${DATAPACKAGE}`);
    }
    const warcs = resources.filter((resource) => resource.path.startsWith('archive/'));
    const indexes = resources.filter((resource) => resource.path.startsWith('indexes/'));
    if (warcs.length === 0) fail(`${DATAPACKAGE} lists no WARC under archive/`);
    const filenames = new Set(warcs.map((warc) => warc.path.slice('archive/'.length)));
    let entries = 0;
    for (const warc of warcs)
      entries += await checkRecords(zip, warc.path, indexes, filenames, work, (records) =>
        onChecked?.(entries + records),
      );
    return { files: resources.length + 1, entries };
  } finally {
    zip.close();
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  }
}

/** Each record of one WARC against its digests and against the index lines that point into it, in offset order. */
async function checkRecords(
  zip: ZipReader,
  warcPath: string,
  indexes: Resource[],
  filenames: ReadonlySet<string>,
  work: string,
  onChecked: (records: number) => void,
): Promise<number> {
  const filename = warcPath.slice('archive/'.length);
  const byOffset = new SortedLines(work);
  for (const index of indexes) {
    let previous = '';
    let n = 0;
    for await (const line of createInterface({ input: await zip.openEntry(index.path), crlfDelay: Infinity })) {
      n++;
      if (Buffer.compare(Buffer.from(previous), Buffer.from(line)) > 0) fail(`${index.path} is not sorted`);
      previous = line;
      const fields = cdxjFields(line, `line ${n} of ${index.path}`);
      if (!filenames.has(fields.filename))
        fail(`line ${n} of ${index.path} points into ${JSON.stringify(fields.filename)}, which the WACZ does not hold`);
      if (fields.filename !== filename) continue;
      await byOffset.add(`${fields.offset.padStart(16, '0')} ${fields.length} ${fields.digest} ${fields.url}`);
    }
  }
  const expected = byOffset.sorted();
  try {
    const parser = new WARCParser(await zip.openEntry(warcPath), { keepHeadersCase: true });
    let records = 0;
    for await (const record of parser) {
      const payload = await record.readFully(false);
      const offset = parser.offset;
      const length = parser.recordLength;
      if (record.warcType !== 'response') continue;
      const payloadDigest = `sha256:${sha256(payload)}`;
      const head = Buffer.from(`${record.httpHeaders?.toString() ?? ''}\r\n`);
      if (record.warcPayloadDigest !== payloadDigest)
        fail(`the record at ${offset} in ${warcPath} does not match its payload digest`);
      if (record.warcHeader('WARC-Block-Digest') !== `sha256:${sha256(Buffer.concat([head, payload]))}`)
        fail(`the record at ${offset} in ${warcPath} does not match its block digest`);
      const next = await expected.next();
      const want = `${String(offset).padStart(16, '0')} ${length} ${payloadDigest} ${record.warcTargetURI ?? ''}`;
      if (next.done === true || next.value !== want)
        fail(`the index does not point at the record at ${offset} in ${warcPath} as it is`);
      onChecked(++records);
    }
    if ((await expected.next()).done !== true) fail(`the index points at records ${warcPath} does not hold`);
    return records;
  } finally {
    // A failure leaves the merge suspended: its runs are open until it is returned.
    await expected.return(undefined);
  }
}

/** The fields of a CDXJ line (`urlkey timestamp {json}`) the check compares, each of the type convert writes. */
function cdxjFields(
  line: string,
  where: string,
): { url: string; digest: string; offset: string; length: string; filename: string } {
  const match = /^\S+ \d{14} (\{.*\})$/.exec(line);
  let fields: unknown;
  try {
    fields = match === null ? undefined : JSON.parse(match[1] as string);
  } catch {
    fields = undefined;
  }
  const record = fields as Record<string, unknown> | undefined;
  if (
    typeof record !== 'object' ||
    record === null ||
    !['url', 'digest', 'filename'].every((key) => typeof record[key] === 'string') ||
    !['offset', 'length'].every((key) => typeof record[key] === 'string' && /^\d{1,15}$/.test(record[key] as string))
  )
    fail(
      `${where} is not a CDXJ line of a record (urlkey, 14-digit timestamp, JSON with url, digest, offset, length, filename)`,
    );
  return record as { url: string; digest: string; offset: string; length: string; filename: string };
}

/** The datapackage's resources, each a path, a hash and a size, or PACKAGE_INVALID. */
function resourcesOf(datapackage: Record<string, unknown>): Resource[] {
  const resources = datapackage.resources;
  if (
    !Array.isArray(resources) ||
    !resources.every(
      (resource: Partial<Resource> | null) =>
        typeof resource === 'object' &&
        resource !== null &&
        typeof resource.path === 'string' &&
        typeof resource.hash === 'string' &&
        Number.isSafeInteger(resource.bytes),
    )
  )
    fail(`the resources of ${DATAPACKAGE} are not a list of files, each with its path, hash and bytes`);
  return resources as Resource[];
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function parse(bytes: Buffer, name: string): Record<string, unknown> {
  try {
    return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  } catch {
    return fail(`${name} is not JSON`);
  }
}

function fail(why: string): never {
  throw new RabbitError('PACKAGE_INVALID', `the WACZ does not hold what it claims: ${why}`);
}
