// Writes a synthetic archive of N tiny entries with its manifest, for measuring readers at scale:
//   node bench/make-big-archive.js OUT.zip [--entries 1000000] [--prototypes 30] [--variant 0]
// A different --variant changes the bodies of every 1000th entry, so `diff` has work to do.
// Stored entries, zip64 end records and a zip64 extra field on every central directory record
// (as a writer must when entries exceed 65,535); written streaming, so it runs in flat memory.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { crc32 } from 'node:zlib';

const args = process.argv.slice(2);
const out = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a));
const flag = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(args[at + 1]);
};
if (!out) {
  console.error('usage: node bench/make-big-archive.js OUT.zip [--entries N] [--prototypes P] [--variant V]');
  process.exit(2);
}
const entries = flag('entries', 1_000_000);
const prototypes = flag('prototypes', 30);
const variant = flag('variant', 0);
const BASE = 'http://127.0.0.1:1';
const API = '/rabbit/api/';

/** A write stream that respects backpressure, fed in ~1 MiB batches. */
function sink(path) {
  const stream = createWriteStream(path);
  let batch = [];
  let size = 0;
  let written = 0;
  return {
    get offset() {
      return written + size;
    },
    async write(buffer) {
      batch.push(buffer);
      size += buffer.length;
      if (size >= 1 << 20) await this.flush();
    },
    async flush() {
      if (batch.length === 0) return;
      const chunk = Buffer.concat(batch);
      batch = [];
      written += size;
      size = 0;
      if (!stream.write(chunk)) await once(stream, 'drain');
    },
    async close() {
      await this.flush();
      stream.end();
      await once(stream, 'finish');
    },
    stream,
  };
}

const zip = sink(out);
const central = sink(`${out}.cd.tmp`);
const manifestPath = `${out}.manifest.tmp`;
const manifest = sink(manifestPath);
let count = 0;

async function addEntry(name, data, crc) {
  const nameBytes = Buffer.from(name, 'utf8');
  const offset = zip.offset;
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(45, 4);
  local.writeUInt16LE(0x800, 6);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(nameBytes.length, 26);
  await zip.write(local);
  await zip.write(nameBytes);
  if (typeof data.pipe === 'function') {
    await zip.flush();
    for await (const chunk of data) await zip.write(chunk);
  } else await zip.write(data);
  const record = Buffer.alloc(46 + nameBytes.length + 28);
  record.writeUInt32LE(0x02014b50, 0);
  record.writeUInt16LE(45, 4);
  record.writeUInt16LE(45, 6);
  record.writeUInt16LE(0x800, 8);
  record.writeUInt32LE(crc, 16);
  record.writeUInt32LE(0xffffffff, 20);
  record.writeUInt32LE(0xffffffff, 24);
  record.writeUInt16LE(nameBytes.length, 28);
  record.writeUInt16LE(28, 30);
  record.writeUInt32LE(0xffffffff, 42);
  nameBytes.copy(record, 46);
  const extra = 46 + nameBytes.length;
  record.writeUInt16LE(1, extra);
  record.writeUInt16LE(24, extra + 2);
  record.writeBigUInt64LE(BigInt(data.size ?? data.length), extra + 4);
  record.writeBigUInt64LE(BigInt(data.size ?? data.length), extra + 12);
  record.writeBigUInt64LE(BigInt(offset), extra + 20);
  await central.write(record);
  count++;
}

const started = new Date().toISOString();
await manifest.write(
  Buffer.from(
    `{"formatVersion":1,"tool":{"name":"rabbit-export","version":"0.1.0"},"source":{"baseUrl":"${BASE}"},"startedAt":"${started}","finishedAt":"${started}","complete":true,"prototypes":{`,
  ),
);
const perPrototype = Math.ceil(entries / prototypes);
let made = 0;
let bytes = 0;
for (let p = 0; p < prototypes && made < entries; p++) {
  const id = String(1001 + p);
  await manifest.write(
    Buffer.from(
      `${p ? ',' : ''}"${id}":{"name":"Prototype ${id}","lastModification":1700000000000,"lastUser":"bench","revision":3,"complete":true,"revisions":{"3":{"milestone":null,"files":[`,
    ),
  );
  for (let i = 0; i < perPrototype && made < entries; i++, made++) {
    const page = `page${String(i >> 7).padStart(4, '0')}`;
    const element = `element${String(i).padStart(6, '0')}`;
    const path = `prototypes/${id}/r3/pages/${page}/elements/${element}.json`;
    const changed = variant !== 0 && i % 1000 === 0;
    const data = Buffer.from(
      `{"id":"${element}","page":"${page}","x":${i % 640},"y":${(i * 7) % 480}${changed ? `,"v":${variant}` : ''}}`,
    );
    const sha256 = createHash('sha256').update(data).digest('hex');
    await addEntry(path, data, crc32(data));
    bytes += data.length;
    const entry = {
      path,
      source: `${API}prototypes/${id}/pages/${page}/elements/${element}.json`,
      sha256,
      size: data.length,
      contentType: 'application/json',
      lastModified: 'Mon, 01 Jan 2024 00:00:00 GMT',
    };
    await manifest.write(Buffer.from(`${i ? ',' : ''}${JSON.stringify(entry)}`));
  }
  await manifest.write(Buffer.from(']}}}'));
}
await manifest.write(
  Buffer.from(`},"files":[],"errors":[],"stats":{"requests":${made},"retries":0,"bytes":${bytes},"files":${made}}}`),
);
await manifest.close();

// manifest.json last, stored, with its size and CRC known before its header is written.
let manifestCrc = 0;
for await (const chunk of createReadStream(manifestPath)) manifestCrc = crc32(chunk, manifestCrc);
const manifestSize = (await stat(manifestPath)).size;
const manifestStream = createReadStream(manifestPath);
manifestStream.size = manifestSize;
manifestStream.length = manifestSize;
await addEntry('manifest.json', manifestStream, manifestCrc);
await central.close();

const directoryOffset = zip.offset;
await zip.flush();
for await (const chunk of createReadStream(`${out}.cd.tmp`)) await zip.write(chunk);
const directorySize = zip.offset - directoryOffset;
const zip64End = zip.offset;
const record = Buffer.alloc(56);
record.writeUInt32LE(0x06064b50, 0);
record.writeBigUInt64LE(44n, 4);
record.writeUInt16LE(45, 12);
record.writeUInt16LE(45, 14);
record.writeBigUInt64LE(BigInt(count), 24);
record.writeBigUInt64LE(BigInt(count), 32);
record.writeBigUInt64LE(BigInt(directorySize), 40);
record.writeBigUInt64LE(BigInt(directoryOffset), 48);
const locator = Buffer.alloc(20);
locator.writeUInt32LE(0x07064b50, 0);
locator.writeBigUInt64LE(BigInt(zip64End), 8);
locator.writeUInt32LE(1, 16);
const end = Buffer.alloc(22);
end.writeUInt32LE(0x06054b50, 0);
end.writeUInt16LE(0xffff, 8);
end.writeUInt16LE(0xffff, 10);
end.writeUInt32LE(0xffffffff, 12);
end.writeUInt32LE(0xffffffff, 16);
await zip.write(Buffer.concat([record, locator, end]));
await zip.close();
await rm(`${out}.cd.tmp`, { force: true });
await rm(manifestPath, { force: true });
console.log(
  `${out}: ${count} entries (${made} files + manifest.json, ${manifestSize} bytes of manifest), ${zip.offset} bytes`,
);
