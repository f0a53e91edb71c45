// CPU time of the key scan (dist/core/secret-marker.js) when a body arrives in pieces of 1 byte,
// 16 bytes and 64 KiB: random bytes, XHTML, base64, and bodies written to make each piece cost
// the most (a key's base64 run's first character over and over; the run less its last character
// over and over). CPU time (process.cpuUsage), the least of five rounds. `npm run build` first. Given other builds' dist folders as arguments, it
// measures each of them too, in turns, so that a busy machine slows all of them alike.
import { randomBytes } from 'node:crypto';
import { KEYS, dists, markers, repeatTo } from './key-scan-builds.js';

const KiB = 1024;
/** The base64 run of the first key, 0 bytes into a group of three: the characters only it decides. */
const run = Buffer.from(KEYS[0]).toString('base64').slice(0, 53);
const bodies = {
  'random bytes': (size) => randomBytes(size),
  XHTML: (size) =>
    repeatTo(
      '<div class="el" style="left:10px;top:20px"><p>Order &amp; pay &#8212; total: 100%</p><a href="/p/3?x=1&amp;y=%20">next</a></div>\n',
      size,
    ),
  base64: (size) => Buffer.from(randomBytes(size).toString('base64')).subarray(0, size),
  "a run's first char": (size) => repeatTo(run[0], size),
  'a run less its last': (size) => repeatTo(run.slice(0, -1), size),
  'the same in UTF-16': (size) => repeatTo(Buffer.from(run.slice(0, -1), 'utf16le').toString('latin1'), size),
};
const pieces = [
  [1, 512 * KiB],
  [16, 4096 * KiB],
  [64 * KiB, 64 * 1024 * KiB],
];

/** CPU milliseconds (user and system) to scan `body` cut into pieces of `piece` bytes. */
function cpuMs(marker, body, piece) {
  const cuts = [];
  for (let i = 0; i < body.length; i += piece) cuts.push(body.subarray(i, i + piece));
  const started = process.cpuUsage();
  const replacer = marker.replacer();
  let out = 0;
  for (const cut of cuts) out += replacer.push(cut).length;
  out += replacer.end().length;
  const used = process.cpuUsage(started);
  if (out !== body.length || replacer.count !== 0) throw new Error('a key where there is none');
  return (used.user + used.system) / 1000;
}

console.log(
  `${'body'.padEnd(20)} ${'piece'.padStart(7)} ${'size'.padStart(9)}  ${dists.map((_, i) => `#${i}`.padStart(8)).join(' ')}`,
);
for (const [name, make] of Object.entries(bodies)) {
  for (const [piece, size] of pieces) {
    const body = make(size);
    for (const marker of markers) cpuMs(marker, body.subarray(0, Math.min(size, 64 * KiB)), piece);
    const times = markers.map(() => []);
    for (let round = 0; round < 5; round++)
      for (const [i, marker] of markers.entries()) times[i].push(cpuMs(marker, body, piece));
    // The least of five: on a shared machine, what others do only ever adds.
    const least = times.map((t) => `${Math.min(...t).toFixed(0)}ms`.padStart(8));
    console.log(`${name.padEnd(20)} ${String(piece).padStart(7)} ${`${size / KiB}K`.padStart(9)}  ${least.join(' ')}`);
  }
}
for (const [i, dist] of dists.entries()) console.log(`#${i} ${dist}`);
