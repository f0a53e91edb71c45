import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { WARCRecord, WARCSerializer, getSurt } from 'warcio';
import type { FileEntry } from '../../manifest/types.js';

/**
 * The WARC/1.1 records of a WACZ, made and serialized by warcio (Webrecorder's own library, the
 * one ReplayWeb.page reads them with): each record a gzip member of its own, so an index can point
 * at it by offset and length and a reader inflates that record alone.
 */

const WARC_VERSION = 'WARC/1.1';

/**
 * zlib's output comes in chunks of this size, each a buffer of its own (16 KiB by default): most
 * records are a few hundred bytes, and 16 KiB of garbage for each of 100,000 of them kept some
 * 50 MB more resident until the collector caught up. 2 KiB chunks come from Node's buffer pool.
 */
const GZIP = { chunkSize: 2048 };

/** When a body was fetched: as the manifest records it, or bounded by the run that fetched it. */
export type FetchTime = { at: string; exact: true } | { at: string; exact: false; between: [string, string] };

/** The WARC header that says a record's date is the run's start, not the moment of its fetch. */
export const BOUNDED_DATE_HEADER = 'Rabbit-Fetch-Time';

export interface SerializedRecord {
  /** The record's gzip member. */
  bytes: Uint8Array;
  /** `sha256:{hex}` of the payload: what the CDXJ line records as its digest. */
  payloadDigest: string;
}

/**
 * One `response` record: the body as archived (keys already redacted), under the URL it was
 * fetched from (never a query but an older view's mode), with the status and the headers the
 * archive keeps of the answer. warcio computes the block and payload digests.
 */
export async function responseRecord(
  entry: FileEntry,
  url: string,
  time: FetchTime,
  body: Uint8Array,
): Promise<SerializedRecord> {
  const httpHeaders: Record<string, string> = {
    'Content-Type': entry.contentType,
    'Content-Length': String(body.length),
  };
  if (entry.lastModified !== null) httpHeaders['Last-Modified'] = entry.lastModified;
  const warcHeaders: Record<string, string> = { 'Rabbit-Archive-Entry': entry.path };
  if (!time.exact) warcHeaders[BOUNDED_DATE_HEADER] = `between ${time.between[0]} and ${time.between[1]}`;
  const record = WARCRecord.create(
    {
      url,
      date: time.at,
      type: 'response',
      warcVersion: WARC_VERSION,
      statusline: 'HTTP/1.1 200 OK',
      httpHeaders,
      warcHeaders,
    },
    [body],
  );
  // The digests by node:crypto and the gzip member by zlib at once, rather than warcio's per-record
  // WebAssembly hasher and CompressionStream: with a hundred thousand small records those two
  // set-ups, not the bytes, were most of the time (10 minutes against 2 for 100,000 records).
  // warcio takes digests it is given as they are, and still writes every byte of the record.
  const head = Buffer.from(`${record.httpHeaders?.toString() ?? ''}\r\n`, 'utf8');
  const payloadDigest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
  record.warcHeaders.headers.set('WARC-Payload-Digest', payloadDigest);
  record.warcHeaders.headers.set(
    'WARC-Block-Digest',
    `sha256:${createHash('sha256').update(head).update(body).digest('hex')}`,
  );
  return { bytes: await gzipMember(record), payloadDigest };
}

/** The `warcinfo` record that opens the WARC: the tool, the source and how record dates were set. */
export async function warcinfoRecord(
  filename: string,
  date: string,
  fields: Record<string, string>,
): Promise<Uint8Array> {
  const record = WARCRecord.createWARCInfo({ filename, date, warcVersion: WARC_VERSION, type: 'warcinfo' }, fields);
  return gzipMember(record);
}

/**
 * The record's bytes as warcio serializes them, in one gzip member. The pieces are joined by
 * Buffer.concat, which takes a record of a few hundred bytes from Node's buffer pool, rather than
 * by warcio's readFully, which gives each its own ArrayBuffer.
 */
async function gzipMember(record: WARCRecord): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of new WARCSerializer(record)) chunks.push(chunk);
  return gzipSync(Buffer.concat(chunks), GZIP);
}

/**
 * The CDXJ line of a record (`urlkey timestamp {json}`), in the fields and forms warcio's own
 * indexer writes: the SURT of the URL, a 14-digit timestamp, offset and length as strings.
 */
export function cdxjLine(record: {
  url: string;
  date: string;
  mime: string;
  digest: string;
  offset: number;
  length: number;
  filename: string;
}): string {
  const timestamp = record.date.replace(/[-:T]/g, '').slice(0, 14);
  const json = {
    url: record.url,
    mime: record.mime.split(';')[0]?.trim() ?? '',
    status: '200',
    digest: record.digest,
    length: String(record.length),
    offset: String(record.offset),
    filename: record.filename,
  };
  return `${getSurt(record.url)} ${timestamp} ${JSON.stringify(json)}`;
}
