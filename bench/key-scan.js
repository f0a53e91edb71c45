// Throughput of the key scan (dist/core/secret-marker.js) on bodies without a key: random bytes
// (what a PNG's compressed data looks like), XHTML and JSON text, base64, fed in 64 KiB chunks as a
// response body arrives. `npm run build` first. Given other builds' dist folders as arguments, it
// measures each of them too, in turns, so that a busy machine slows all of them alike.
import { randomBytes } from 'node:crypto';
import { KEYS, dists, markers, repeatTo } from './key-scan-builds.js';

const MiB = 1024 * 1024;
const CHUNK = 64 * 1024;
/** A PNG of the given size: its signature, then IDAT chunks of 32 KiB of random bytes (CRCs left zero). */
function pngOf(size) {
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])];
  for (let at = 8; at < size; at += 32 * 1024 + 12) {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(32 * 1024, 0);
    head.write('IDAT', 4, 'latin1');
    parts.push(head, randomBytes(32 * 1024), Buffer.alloc(4));
  }
  return Buffer.concat(parts);
}

const bodies = {
  'random bytes': randomBytes(64 * MiB),
  'PNG (random IDAT)': pngOf(64 * MiB),
  XHTML: repeatTo(
    '<div class="el" style="left:10px;top:20px"><p>Order &amp; pay &#8212; total: 100%</p><a href="/p/3?x=1&amp;y=%20">next</a></div>\n',
    64 * MiB,
  ),
  JSON: repeatTo(
    '{"id":1001,"name":"Checkout \\u00e9tape","url":"https:\\/\\/x.example\\/a?b=1&c=%41","w":320},\n',
    64 * MiB,
  ),
  // An image in a data: URI: one long stretch of the base64 alphabet, which the key's base64 runs
  // are searched for in.
  base64: Buffer.from(randomBytes(48 * MiB).toString('base64')),
};

function scan(marker, body) {
  const replacer = marker.replacer();
  let out = 0;
  for (let i = 0; i < body.length; i += CHUNK) out += replacer.push(body.subarray(i, i + CHUNK)).length;
  out += replacer.end().length;
  if (out !== body.length || replacer.count !== 0) throw new Error('a key where there is none');
}

for (const [name, body] of Object.entries(bodies)) {
  for (const marker of markers) scan(marker, body.subarray(0, 4 * MiB));
  const rates = markers.map(() => []);
  for (let round = 0; round < 5; round++) {
    for (const [i, marker] of markers.entries()) {
      const started = process.hrtime.bigint();
      scan(marker, body);
      rates[i].push(body.length / MiB / (Number(process.hrtime.bigint() - started) / 1e9));
    }
  }
  // The floor: one native search for one key over the same bytes, about the speed of memory.
  const needle = Buffer.from(KEYS[0]);
  const started = process.hrtime.bigint();
  for (let i = 0; i < body.length; i += CHUNK) body.subarray(i, i + CHUNK).indexOf(needle);
  const floor = body.length / MiB / (Number(process.hrtime.bigint() - started) / 1e9);
  console.log(`${name.padEnd(18)} ${floor.toFixed(0).padStart(6)} MB/s (one Buffer.indexOf of one key)`);
  for (const [i, dist] of dists.entries()) {
    const sorted = rates[i].sort((a, b) => a - b);
    const median = (sorted[2] ?? 0).toFixed(0).padStart(6);
    console.log(`${name.padEnd(18)} ${median} MB/s (median of 5, ${(body.length / MiB).toFixed(0)} MiB)  ${dist}`);
  }
}

// What an export pays per body: 72,000 small JSON bodies, each scanned from a fresh replacer.
const small = Buffer.from(
  JSON.stringify({ id: 1001, items: Array.from({ length: 20 }, (_, i) => ({ i, url: `/a?b=${i}&c=%41` })) }),
);
const times = markers.map(() => []);
for (let round = 0; round < 5; round++) {
  for (const [i, marker] of markers.entries()) {
    const started = process.hrtime.bigint();
    for (let k = 0; k < 72_000; k++) scan(marker, small);
    times[i].push(Number(process.hrtime.bigint() - started) / 1e6);
  }
}
for (const [i, dist] of dists.entries()) {
  const median = times[i].sort((a, b) => a - b)[2] ?? 0;
  console.log(
    `${'72,000 small bodies'.padEnd(18)} ${median.toFixed(0).padStart(6)} ms (${small.length} bytes each)  ${dist}`,
  );
}
