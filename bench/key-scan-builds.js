// What the key-scan benches share: the keys they look for, the builds they measure (this tree's
// dist/ and any other builds' dist folders given as arguments, each scanning with its own
// SecretMarker), and bodies made of one text repeated.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

// The run's keys as the service issues them: the account's and a prototype's, 40 hex digits.
export const KEYS = ['d411e757da3c9f0db8204e3accc48fbfe1800269', '60bb9a7f0ae9c24cdfd3a774779d614ee8900572'];

export const dists = [new URL('../dist', import.meta.url).pathname, ...process.argv.slice(2).map((d) => resolve(d))];

/** One SecretMarker for KEYS from each build, in the order of `dists`. */
export const markers = [];
for (const dist of dists) {
  const { SecretMarker } = await import(pathToFileURL(`${dist}/core/secret-marker.js`).href);
  markers.push(SecretMarker.of(KEYS));
}

/** `text` (one byte a character) repeated to exactly `size` bytes. */
export function repeatTo(text, size) {
  const one = Buffer.from(text, 'latin1');
  return Buffer.concat(Array.from({ length: Math.ceil(size / one.length) }, () => one)).subarray(0, size);
}
