import { parse as parseLossless } from 'lossless-json';
import { jsonText } from '../api/json-body.js';
import type { SecretMarker } from '../core/secret-marker.js';

/**
 * How an archived body and the body the service serves now compare:
 *   `bytes`  the same bytes (sha256 and size);
 *   `json`   other bytes, the same JSON: members in another order, other whitespace, a byte-order
 *            mark on one side only. Numbers compare by their digits as written, so an id past 2^53
 *            is told from its neighbour (lossless-json, as the id lists are read);
 *   `differs` anything else, a body that is not JSON on either side included.
 */
export type Comparison = 'bytes' | 'json' | 'differs';

export function compareJson(archived: Buffer, live: Buffer): Comparison {
  if (archived.equals(live)) return 'bytes';
  const a = parsed(archived);
  const b = parsed(live);
  if (a === undefined || b === undefined) return 'differs';
  return sameValue(a.value, b.value) ? 'json' : 'differs';
}

/** Renderings (PNG, XHTML) match byte for byte or not at all: compared by their digests. */
export function compareDigests(
  archived: { sha256: string; size: number },
  live: { sha256: string; size: number },
): Comparison {
  return archived.sha256 === live.sha256 && archived.size === live.size ? 'bytes' : 'differs';
}

/**
 * A live body as the archive would hold it: the export replaces the run's keys in every body it
 * stores (`keyRedactions` in the entry), so the live answer gets the same replacement before it
 * is compared, and a page whose links carry the key still matches its archived copy.
 */
export function redactLiveBody(body: Buffer, marker: SecretMarker | undefined): Buffer {
  if (marker === undefined) return body;
  const replacer = marker.replacer();
  const head = replacer.push(body);
  const rest = replacer.end();
  return replacer.count === 0 ? body : Buffer.concat([head, rest]);
}

function parsed(body: Buffer): { value: unknown } | undefined {
  try {
    return { value: parseLossless(jsonText(body)) };
  } catch {
    // Not JSON (or JSON with a repeated member, which lossless-json refuses): only bytes can match.
    return undefined;
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (isNumberText(a) || isNumberText(b)) return isNumberText(a) && isNumberText(b) && a.value === b.value;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => sameValue(item, b[index]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.hasOwn(right, key) && sameValue(left[key], right[key]));
}

function isNumberText(value: object): value is { isLosslessNumber: true; value: string } {
  return (value as { isLosslessNumber?: unknown }).isLosslessNumber === true;
}
