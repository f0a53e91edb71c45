import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { exportAccount } from '../../src/export/export-account.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { requireTool as requireHelperTool, python } from '../helpers/tools.js';
import { requireTool, tool } from './tools.js';

const PDFTOTEXT = requireTool('/usr/bin/pdftotext', 'poppler-utils');

/**
 * A rendering correctly listed in the manifest but far larger than any the service draws: a
 * zero-filled entry past the byte cap (it deflates to almost nothing), and a small PNG whose IHDR
 * declares 20000x20000 pixels. Neither is read whole nor embedded; the page is converted without
 * it and the report says so.
 */
let dir: string;
let archive: string;
const PROTOTYPE = '42';
let pages: string[] = [];

/** Replaces `entry` of `zip` with what the Python expression `body` makes, fixing its manifest entry. */
function replaceEntry(zip: string, out: string, entry: string, body: string): void {
  requireHelperTool('python3');
  const script = `
import hashlib, json, struct, sys, zipfile, zlib
src, out, entry = sys.argv[1], sys.argv[2], sys.argv[3]
body = ${body}
with zipfile.ZipFile(src) as z:
    names = z.namelist()
    data = {n: z.read(n) for n in names}
data[entry] = body
manifest = json.loads(data['manifest.json'])
for proto in manifest['prototypes'].values():
    for revision in proto['revisions'].values():
        for f in revision['files']:
            if f['path'] == entry:
                f['sha256'] = hashlib.sha256(body).hexdigest(); f['size'] = len(body)
data['manifest.json'] = json.dumps(manifest).encode()
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as w:
    for n in names: w.writestr(n, data[n])
`;
  execFileSync(python(), ['-c', script, zip, out, entry], { maxBuffer: 1 << 20 });
}

/** One byte past the 64 MiB cap (docs/convert.md). */
const ZEROS = `b'\\0' * ${64 * 1024 * 1024 + 1}`;
/** A valid signature and IHDR (20000x20000, 8-bit RGBA), then a tiny IDAT and IEND. */
const HUGE_IHDR = `(lambda chunk: b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 20000, 20000, 8, 6, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(b'\\0')) + chunk(b'IEND', b''))(lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d)))`;

describe('a rendering too large to read or decode', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-large-rendering-'));
    const service = await startFakeService({ seed: 1, now: () => 1_300_000_000_000 });
    try {
      archive = join(dir, 'archive.zip');
      await exportAccount({ out: archive, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
    } finally {
      await service.close();
    }
    const listing = execFileSync(python(), [
      '-c',
      'import sys,zipfile;print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))',
      archive,
    ]);
    pages = listing
      .toString()
      .split('\n')
      .filter((name) => new RegExp(`^prototypes/${PROTOTYPE}/r\\d+/pages/\\w+\\.png$`).test(name));
  }, 120_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['more bytes than the cap', ZEROS, /more than the \d+ read here/],
    ['an IHDR declaring 20000x20000 pixels', HUGE_IHDR, /declares 20000x20000 pixels/],
  ])('pdf: %s is skipped and reported, the page still converted', async (label, body, why) => {
    const entry = pages[0]!;
    const crafted = join(dir, `${label.split(' ')[0]}.zip`);
    replaceEntry(archive, crafted, entry, body);
    const out = join(dir, `out-${label.split(' ')[0]}`);
    const report = await convertArchive({ archive: crafted, out, to: 'pdf', prototypes: [PROTOTYPE] });
    const prototype = report.prototypes[0]!;
    const pageId = /pages\/(\w+)\.png$/.exec(entry)![1];
    expect(prototype.skipped).toEqual([
      { what: `the rendering of page ${pageId}`, why: expect.stringMatching(why) as unknown as string },
    ]);
    expect(prototype.pages).toBe(pages.length);
    expect(prototype.file).not.toBeNull();
    const text = await tool(PDFTOTEXT, ['-enc', 'UTF-8', join(out, prototype.file!), '-']);
    expect(text.split('\f').length - 1).toBe(pages.length + 1);
  });
});
