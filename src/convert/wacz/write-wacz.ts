import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TOOL_NAME, TOOL_VERSION } from '../../core/version.js';
import type { ArchiveCatalog } from '../../archive/archive-catalog.js';
import type { ManifestHead } from '../../manifest/manifest-stream.js';
import { GENERATED_SOURCE, type FileEntry } from '../../manifest/types.js';
import { ZipWriter } from '../../zip/zip-writer.js';
import type { PackageJob, PackageReport } from '../formats/archive-format.js';
import { HashedFile } from '../hashed-file.js';
import { packagedBody } from '../packaged-body.js';
import { PAGES_HEADER, pageLines, type PageLine } from './page-index.js';
import { fetchTimeOf, servedUrl } from './served-url.js';
import { SortedLines } from './sorted-lines.js';
import { BOUNDED_DATE_HEADER, cdxjLine, responseRecord, warcinfoRecord } from './warc-records.js';

export const WACZ_VERSION = '1.1.1';
const WARC_FILE = 'data.warc.gz';
/** The files of a WACZ, as its datapackage names them. */
const WARC_PATH = `archive/${WARC_FILE}`;
const INDEX_PATH = 'indexes/index.cdx';
const PAGES_PATH = 'pages/pages.jsonl';
export const DATAPACKAGE = 'datapackage.json';
export const DATAPACKAGE_DIGEST = 'datapackage-digest.json';

interface Written {
  path: string;
  file: string;
  sha256: string;
  bytes: number;
}

/**
 * A WACZ 1.1.1 of what the service served: one WARC of `response` records (each its own gzip
 * member), its CDXJ index sorted through the work folder, a page list with each page's words, and
 * a datapackage with the sha256 and size of each file. The bodies stream from the archive one at
 * a time as the manifest lists them; everything that grows with the account is on disk until the
 * zip is written. Files the export generated (the offline viewer) are not what was served and stay out.
 */
export async function writeWacz(job: PackageJob): Promise<PackageReport> {
  const file = `${job.stem}.wacz`;
  const work = await mkdtemp(join(job.out, `.${file}.work-`));
  try {
    const head = await job.archive.manifest();
    const created = job.now().toISOString();
    const { warc, index, catalog, counts } = await writeWarc(job, work, head, created);
    const finishing = (): void => job.onProgress?.({ step: 'finish', done: 0, total: null });
    try {
      finishing();
      const written: Written[] = [
        { path: WARC_PATH, file: warc.path, sha256: await warc.close(), bytes: warc.size },
        await writeLines(join(work, 'index.cdx'), INDEX_PATH, index.sorted()),
      ];
      const walked = (done: number, total: number): void => job.onProgress?.({ step: 'pages', done, total });
      const pages = await writePages(work, catalog, head, job.signal, walked);
      written.push(pages.written);
      finishing();
      const datapackage = datapackageOf(job, head, created, written, pages.first);
      await zipWacz(job, file, written, datapackage);
      const { entries, bytes } = counts;
      return {
        file,
        entries,
        bytes,
        pages: pages.count,
        leftOut: counts.skipped,
        notes: notesOf(counts, pages.missing),
      };
    } finally {
      await catalog.close();
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** What the WARC's records count: bodies recorded (and their bytes), dated by the export's bounds, left out. */
interface RecordCounts {
  entries: number;
  bytes: number;
  bounded: number;
  skipped: number;
}

/** The WARC being written as the manifest streams by, and what it needs besides the entry. */
interface WarcWriting {
  job: PackageJob;
  head: ManifestHead;
  warc: HashedFile;
  index: SortedLines;
  counts: RecordCounts;
}

/**
 * The WARC, its `warcinfo` record then a `response` record for each body the manifest lists, with
 * their index lines, and the catalog the manifest's reading filed (for the page list). The WARC is
 * left open for the caller to close; abandoned on a failure.
 */
async function writeWarc(
  job: PackageJob,
  work: string,
  head: ManifestHead,
  created: string,
): Promise<{ warc: HashedFile; index: SortedLines; catalog: ArchiveCatalog; counts: RecordCounts }> {
  const warc = await HashedFile.create(join(work, WARC_FILE));
  const index = new SortedLines(work);
  const counts: RecordCounts = { entries: 0, bytes: 0, bounded: 0, skipped: 0 };
  try {
    await warc.write(await warcinfoRecord(WARC_FILE, created, warcInfo(job, head)));
    const writing: WarcWriting = { job, head, warc, index, counts };
    // Every entry of the zip but the manifest is listed once in an intact archive.
    const total = Math.max(0, job.archive.zip.index.size - 1);
    let visited = 0;
    const catalog = await job.archive.catalog({
      spillDir: work,
      visitor: {
        file: (entry: FileEntry) => {
          job.onProgress?.({ step: 'bodies', done: ++visited, total });
          return recordEntry(writing, entry);
        },
      },
    });
    return { warc, index, catalog, counts };
  } catch (error) {
    await warc.abandon();
    throw error;
  }
}

/** The fields of the `warcinfo` record: what made the WARC, from which export, and how its dates read. */
function warcInfo(job: PackageJob, head: ManifestHead): Record<string, string> {
  return {
    software: `${TOOL_NAME} ${TOOL_VERSION}`,
    format: 'WARC File Format 1.1',
    source: head.source.baseUrl,
    archive: job.archive.name,
    'exported-by': `${head.tool.name} ${head.tool.version}`,
    'export-started': head.startedAt,
    'export-finished': head.finishedAt,
    'fetch-time':
      `each record's WARC-Date is when its body was fetched, where the archive records it; ` +
      `elsewhere the export's start, with a ${BOUNDED_DATE_HEADER} header giving the export's start and end, which bound it`,
    headers: 'the status, Content-Type and Last-Modified the service answered; bodies as archived, keys redacted',
  };
}

/** One body as a `response` record and its index line; a body missing or damaged in the archive is counted and left out. */
async function recordEntry(writing: WarcWriting, entry: FileEntry): Promise<void> {
  const { job, head, warc, index, counts } = writing;
  if (entry.source === GENERATED_SOURCE) return;
  const body = await packagedBody(job, entry);
  if (body === undefined) {
    counts.skipped++;
    return;
  }
  const url = servedUrl(head.source.baseUrl, entry.source);
  const time = fetchTimeOf(entry, head);
  if (!time.exact) counts.bounded++;
  const record = await responseRecord(entry, url, time, body);
  const offset = warc.size;
  await warc.write(record.bytes);
  await index.add(
    cdxjLine({
      url,
      date: time.at,
      mime: entry.contentType,
      digest: record.payloadDigest,
      offset,
      length: record.bytes.length,
      filename: WARC_FILE,
    }),
  );
  counts.entries++;
  counts.bytes += body.length;
}

/** The page list, with the first page (the package's main page) and how many pages had no rendering to list. */
async function writePages(
  work: string,
  catalog: ArchiveCatalog,
  head: ManifestHead,
  signal: AbortSignal | undefined,
  onPrototype: (done: number, total: number) => void,
): Promise<{ written: Written; count: number; first: PageLine | undefined; missing: number }> {
  const missing = { pages: 0 };
  let count = 0;
  let first: PageLine | undefined;
  const lines = async function* (): AsyncGenerator<string> {
    yield JSON.stringify(PAGES_HEADER);
    for await (const line of pageLines(catalog, head, signal, missing, onPrototype)) {
      first ??= line;
      count++;
      yield JSON.stringify(line);
    }
  };
  const written = await writeLines(join(work, 'pages.jsonl'), PAGES_PATH, lines());
  return { written, count, first, missing: missing.pages };
}

/** What the package holds differently from the archive. */
function notesOf(counts: RecordCounts, missingPages: number): string[] {
  const notes: string[] = [];
  if (counts.bounded > 0) {
    notes.push(
      `${counts.bounded} of ${counts.entries} records are dated at the export's start: the archive does not record when their bodies were fetched`,
    );
  }
  if (counts.skipped > 0)
    notes.push(`${counts.skipped} bodies the manifest lists are missing or damaged in the archive and were left out`);
  if (missingPages > 0)
    notes.push(`${missingPages} pages have no XHTML rendering in the archive and are not listed for replay`);
  return notes;
}

/** `datapackage.json`: the package's description and each file's sha256 and size. */
function datapackageOf(
  job: PackageJob,
  head: ManifestHead,
  created: string,
  written: readonly Written[],
  first: PageLine | undefined,
): string {
  return `${JSON.stringify(
    {
      profile: 'data-package',
      wacz_version: WACZ_VERSION,
      title: `${job.archive.name}: what ${head.source.baseUrl} served`,
      description: `Exported by ${head.tool.name} ${head.tool.version} from ${head.source.baseUrl} between ${head.startedAt} and ${head.finishedAt}; packaged by ${TOOL_NAME} ${TOOL_VERSION}.`,
      created,
      modified: created,
      software: `${TOOL_NAME} ${TOOL_VERSION}`,
      ...(first !== undefined ? { mainPageUrl: first.url, mainPageDate: first.ts } : {}),
      resources: written.map((each) => ({
        name: each.path.slice(each.path.lastIndexOf('/') + 1),
        path: each.path,
        hash: `sha256:${each.sha256}`,
        bytes: each.bytes,
      })),
    },
    null,
    2,
  )}\n`;
}

/** The WACZ itself: the written files, the datapackage and its digest. */
async function zipWacz(job: PackageJob, file: string, written: readonly Written[], datapackage: string): Promise<void> {
  const digest = `${JSON.stringify(
    { path: DATAPACKAGE, hash: `sha256:${createHash('sha256').update(datapackage).digest('hex')}` },
    null,
    2,
  )}\n`;
  const zip = await ZipWriter.create(join(job.out, file), job.signal ? { signal: job.signal } : {});
  try {
    for (const each of written) {
      // The WARC is stored as it is, for replay reads a record by its offset without inflating the zip.
      await zip.addFile({ name: each.path, store: each.path === WARC_PATH }, { file: each.file, size: each.bytes });
    }
    await zip.addBuffer({ name: DATAPACKAGE, store: false }, Buffer.from(datapackage));
    await zip.addBuffer({ name: DATAPACKAGE_DIGEST, store: false }, Buffer.from(digest));
    await zip.finish();
  } catch (error) {
    await zip.abort();
    throw error;
  }
}

async function writeLines(file: string, path: string, lines: AsyncIterable<string>): Promise<Written> {
  const out = await HashedFile.create(file);
  try {
    let batch = '';
    for await (const line of lines) {
      batch += `${line}\n`;
      if (batch.length >= 64 * 1024) {
        await out.write(batch);
        batch = '';
      }
    }
    await out.write(batch);
  } catch (error) {
    await out.abandon();
    throw error;
  }
  return { path, file, sha256: await out.close(), bytes: out.size };
}
