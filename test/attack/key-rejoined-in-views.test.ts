// Shows: a key split by markup a view drops (a comment, a script, a noscript), by an ISO-2022-JP escape, or written as character references with 17+ digits is in no entry of the archive, page views included.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretMarker } from '../../src/core/secret-marker.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { requireTool } from '../helpers/tools.js';
import { tempDir } from '../helpers/temp.js';
import { keyEncodings } from '../export/hostile-front.js';
import { extractedByPython } from '../export/python-zip.js';
import { closeAll, startHostileFront, type Listening } from '../viewer/hostile-front.js';

/**
 * Each page rendering holds the key in no form the scan knows, only in pieces: the raw bytes are
 * stored with no key in them, as they should. What the viewer derives from them (the view, the
 * text a view falls back to, the search index) must not join the pieces again.
 */

/** The page bodies, given the key: each joins into the key once its markup is gone or decoded. */
const VARIANTS: ((key: string) => string)[] = [
  (k) => `<p id="comment">${k.slice(0, 12)}<!-- -->${k.slice(12)}</p>`,
  (k) => `<p id="script">${k.slice(0, 12)}<script>var x;</script>${k.slice(12)}</p>`,
  (k) => `<p id="noscript">${k.slice(0, 12)}<noscript>n</noscript>${k.slice(12)}</p>`,
  // Not markup: character references with more leading zeros than the scan reads (HTML reads any number).
  (k) => `<p id="zeros">${[...k].map((c) => `&#x${c.charCodeAt(0).toString(16).padStart(20, '0')};`).join('')}</p>`,
  // ESC ( B switches to ASCII, which the page already is: a decoder drops it, the byte scan sees no key.
  (k) => `<meta charset="iso-2022-jp"><p id="iso-2022-jp">${k.slice(0, 12)}\x1b(B${k.slice(12)}</p>`,
];

let service: FakeService;
let front: Listening | undefined;
let dir: string;
const files = new Map<string, Buffer>();

beforeAll(async () => {
  requireTool('python3');
  let served = 0;
  front = await startHostileFront({
    upstream: () => service.baseUrl,
    pageFor: () => {
      const variant = VARIANTS[served++ % VARIANTS.length] as (key: string) => string;
      return `<html><head><title>split</title></head><body>${variant(service.keys.readOnly)}</body></html>`;
    },
  });
  service = await startFakeService({ seed: 1, advertisedBaseUrl: front.origin });
  dir = await tempDir();
  const out = join(dir, 'split.zip');
  const result = await exportAccount({ out, baseUrl: front.origin, keys: [service.keys.readOnly] });
  expect(result.complete).toBe(true);
  const into = join(dir, 'x');
  for (const [name, data] of await extractedByPython(out, into)) files.set(name, data);
}, 120_000);

afterAll(async () => {
  await closeAll(front, service);
});

describe('a key served in pieces that a view joins', () => {
  it('is in no entry of the archive, in any encoding', () => {
    const key = service.keys.readOnly;
    const scan = SecretMarker.of([key]) as SecretMarker;
    const found: string[] = [];
    for (const [name, bytes] of files) {
      for (const [encoding, text] of Object.entries(keyEncodings(key)))
        if (bytes.includes(Buffer.from(text.trim(), 'latin1'))) found.push(`${name}: ${encoding}`);
      const replacer = scan.replacer();
      replacer.push(bytes);
      replacer.end();
      if (replacer.count > 0) found.push(`${name}: ${replacer.count} found by the scan`);
    }
    expect(files.size).toBeGreaterThan(10);
    expect(found).toEqual([]);
  });
});
