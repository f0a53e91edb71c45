import type { SecretMarker } from '../../src/core/secret-marker.js';

/** The marker's replacer fed `bytes` cut at the given places (as a body comes in pieces): its output and count. */
export function replaceIn(marker: SecretMarker, bytes: Buffer, cuts: number[]): { out: Buffer; count: number } {
  const replacer = marker.replacer();
  const parts: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    parts.push(replacer.push(bytes.subarray(from, cut)));
    from = cut;
  }
  parts.push(replacer.end());
  return { out: Buffer.concat(parts), count: replacer.count };
}
