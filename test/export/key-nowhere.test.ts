import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isRabbitError } from '../../src/core/errors.js';
import { KEY_MARKER } from '../../src/core/secret-marker.js';
import { exportAccount } from '../../src/export/export-account.js';
import { allFileEntries, type FileEntry, type Manifest } from '../../src/manifest/types.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { plainZip } from '../helpers/plain-zip.js';
import { tempDir } from '../helpers/temp.js';
import { dataUriText, FOREIGN_WITH_KEY, keyEncodings, startHostileFront, type HostileFront } from './hostile-front.js';
import { extractedByPython, filesIn } from './python-zip.js';

const exec = promisify(execFile);

// One service and one hostile front for the file: every run here only reads from them.
let service: FakeService;
let front: HostileFront;
/** The file's folder, for the export its tests share; `dir` is each test's own. */
let keep: string;
let dir: string;

beforeAll(async () => {
  service = await startFakeService({ seed: 1 });
  front = await startHostileFront(service.baseUrl, runKeys());
  keep = await mkdtemp(join(tmpdir(), 'rabbit-key-nowhere-'));
});
beforeEach(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await front?.close();
  await service?.close();
  await rm(keep, { recursive: true, force: true });
});

/** The run's two keys: the account's and one prototype's (a run may use several). */
function runKeys(): string[] {
  return [service.keys.readOnly, service.keys.perPrototype['1001'] as string];
}

/** `entry: encoding` for every place a key is found, in any encoding the front writes it in. */
function keysFound(files: Map<string, Buffer>, keys: readonly string[]): string[] {
  const found: string[] = [];
  for (const [name, bytes] of files) {
    for (const [i, key] of keys.entries()) {
      for (const [encoding, text] of Object.entries(keyEncodings(key))) {
        if (bytes.includes(Buffer.from(text, 'latin1'))) found.push(`${name}: key ${i + 1} ${encoding}`);
      }
    }
  }
  return found;
}

/** Per key in a page: the own link, the foreign query, the foreign path and query, the text thrice, a data: URI. */
const PAGE_KEYS = 8;
const DATA_URI = /data:application\/json;base64,([A-Za-z0-9+/=]*)/g;

/** What the data: URIs of a page decode to, in order. */
function dataUrisOf(page: Buffer): string[] {
  return [...page.toString('latin1').matchAll(DATA_URI)].map((uri) =>
    Buffer.from(uri[1] as string, 'base64').toString('latin1'),
  );
}

/**
 * Each file's SHA-256 by coreutils' sha256sum, in the order given: one process for them all (each
 * process spawned from a large test worker costs it milliseconds), lines ended by NUL so that no
 * name is escaped.
 */
async function sha256sums(paths: readonly string[]): Promise<string[]> {
  const { stdout } = await exec('sha256sum', ['--zero', '--', ...paths]);
  const lines = stdout.split('\0').slice(0, -1);
  expect(lines.map((line) => line.slice(66))).toEqual(paths);
  return lines.map((line) => line.slice(0, 64));
}

async function exportThroughFront(out: string, since?: string) {
  const result = await exportAccount({
    out,
    baseUrl: front.baseUrl,
    keys: runKeys(),
    concurrency: 4,
    ...(since ? { since } : {}),
  });
  return result;
}

/**
 * The export through the front, extracted by Python, made once for the file: the first test judges
 * it, the second makes from it the archive an older version would have written.
 */
let spiked: Promise<{ out: string; files: Map<string, Buffer> }> | undefined;
function spikedExport(): Promise<{ out: string; files: Map<string, Buffer> }> {
  return (spiked ??= (async () => {
    const result = await exportThroughFront(join(keep, 'spiked.zip'));
    return { out: result.out, files: await extractedByPython(result.out, join(keep, 'spiked')) };
  })());
}

/** The manifest inside an extracted archive. */
function manifestIn(files: Map<string, Buffer>): Manifest {
  return JSON.parse((files.get('manifest.json') as Buffer).toString('utf8')) as Manifest;
}

describe('the API key is nowhere in the archive', () => {
  it('after an export from a service that writes it into pages, JSON, elements, stylesheets, PNGs, foreign links and errors', async () => {
    const { out, files } = await spikedExport();

    expect(keysFound(files, runKeys())).toEqual([]);

    const manifest = manifestIn(files);
    const entries = allFileEntries(manifest);
    const redacted = entries.filter((entry) => entry.keyRedactions !== undefined);
    // Each kind of body the front spiked holds the marker where the key was, and says how often.
    for (const pattern of [/pages\/[^/.]+\.html$/, /elements\/[^/]+\.json$/, /pages\/[^/]+\.json$/, /\.png$/, /\.css$/])
      expect(
        redacted.some((entry) => pattern.test(entry.path)),
        String(pattern),
      ).toBe(true);
    // Keys in PNGs both large (streamed to a file of its own) and small (kept whole in memory).
    const pngs = redacted.filter((entry) => entry.path.endsWith('.png'));
    expect(pngs.filter((entry) => entry.size > 1024 * 1024).length).toBe(3);
    expect(pngs.filter((entry) => entry.size < 64 * 1024).length).toBeGreaterThan(3);
    const page = redacted.find((entry) => /pages\/[^/.]+\.html$/.test(entry.path)) as FileEntry;
    expect(page.keyRedactions).toBe(2 * PAGE_KEYS);
    const pageBytes = files.get(page.path) as Buffer;
    expect(pageBytes.toString('latin1').split(KEY_MARKER).length - 1).toBe(2 * (PAGE_KEYS - 1));
    // The data: URIs are still base64 of as many bytes, which decode to the text with the marker
    // where the key was.
    const decoded = dataUrisOf(pageBytes);
    expect(decoded.map((text) => text.length)).toEqual(runKeys().map((key) => dataUriText(key).length));
    for (const text of decoded) {
      expect(keysFound(new Map([['data: URI', Buffer.from(text, 'latin1')]]), runKeys())).toEqual([]);
      expect(text).toMatch(new RegExp(`^\\{"token":"[A-Z-]*${KEY_MARKER}"\\}$`));
    }
    // So do an element's base64 and base64url fields.
    const element = redacted.find((entry) => /elements\/[^/]+\.json$/.test(entry.path)) as FileEntry;
    const fields = JSON.parse((files.get(element.path) as Buffer).toString('utf8')) as Record<string, string>;
    const blob = Buffer.from(fields.blob0 as string, 'base64').toString('latin1');
    const token = Buffer.from(fields.token0 as string, 'base64url').toString('latin1');
    expect([blob.length, token.length]).toEqual([8 + (runKeys()[0] as string).length, (runKeys()[0] as string).length]);
    expect(keysFound(new Map([['fields', Buffer.from(blob + token, 'latin1')]]), runKeys())).toEqual([]);
    expect(`${blob} ${token}`).toMatch(new RegExp(`^api_key=[A-Z-]*${KEY_MARKER} [A-Z-]*${KEY_MARKER}$`));
    // What is listed is what is stored: sha256sum and size of the extracted entry.
    const sums = await sha256sums(redacted.map((entry) => join(keep, 'spiked', entry.path)));
    for (const [i, entry] of redacted.entries()) {
      expect(sums[i], entry.path).toBe(entry.sha256);
      expect((files.get(entry.path) as Buffer).length).toBe(entry.size);
    }
    expect(manifest.foreignReferences?.map((ref) => ref.url)).toContain(FOREIGN_WITH_KEY);
    expect(manifest.errors.some((error) => error.status === 403)).toBe(true);

    const report = await verifyArchive(out);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('after export --since on an archive made before keys were replaced, which holds them', async () => {
    const old = await oldStyleArchive((await spikedExport()).files, runKeys()[0] as string, runKeys());
    // The crafted archive does hold the key, as one made before the fix did.
    expect(keysFound(old.files, runKeys()).length).toBeGreaterThan(0);
    const prev = join(dir, 'prev.zip');
    await writeFile(prev, plainZip([...old.files].map(([name, data]) => ({ name, data }))));

    const result = await exportThroughFront(join(dir, 'since.zip'), prev);
    const files = await extractedByPython(result.out, join(dir, 'since'));
    expect(keysFound(files, runKeys())).toEqual([]);
    const manifest = manifestIn(files);
    // The copies really came from PREV, and were counted as they were redacted.
    expect(Object.values(manifest.prototypes).map((record) => record.origin?.mode)).toContain('reused');
    const reusedPage = allFileEntries(manifest).find((entry) => /pages\/[^/.]+\.html$/.test(entry.path)) as FileEntry;
    expect(reusedPage.keyRedactions).toBe(2 * PAGE_KEYS);
    expect(await sha256sums([join(dir, 'since', reusedPage.path)])).toEqual([reusedPage.sha256]);
    expect((await verifyArchive(result.out)).ok).toBe(true);
  });

  it('nor in the work folder an interrupted export leaves (journal, spool, entries), nor after it resumes', async () => {
    const controller = new AbortController();
    let responses = 0;
    let largeStored = false;
    const out = join(dir, 'cut.zip');
    // Cut after the 60th answer, and not before a body too large to hold in memory has been stored
    // (an answer is told once its body is in the spool): which answers come first varies with the load.
    const run = (signal?: AbortSignal) =>
      exportAccount({
        out,
        baseUrl: front.baseUrl,
        keys: runKeys(),
        concurrency: 4,
        ...(signal ? { signal } : {}),
        onEvent: (event) => {
          if (event.type !== 'response') return;
          largeStored ||= event.bytes > 256 * 1024;
          if (++responses >= 60 && largeStored && !controller.signal.aborted) controller.abort();
        },
      });
    const error = await run(controller.signal).catch((caught: unknown) => caught);
    expect(isRabbitError(error, 'INTERRUPTED')).toBe(true);
    const work = await filesIn(join(dir, '.cut.zip.rabbit-work'));
    expect(keysFound(work, runKeys())).toEqual([]);
    // Among them a large body the cut left in a spool file of its own.
    expect([...work.keys()].filter((name) => /^spool\/[0-9a-f]{64}$/.test(name)).length).toBeGreaterThan(0);
    // The journal records a page stored before the cut, with the count of the keys it held.
    expect((work.get('journal.jsonl') as Buffer).toString()).toMatch(
      new RegExp(`pages/[^/"]+\\.html"[^\\n]*"keyRedactions":${2 * PAGE_KEYS}\\b`),
    );

    const result = await run();
    const files = await extractedByPython(result.out, join(dir, 'cut'));
    expect(keysFound(files, runKeys())).toEqual([]);
    // A page stored before the cut and reused from the journal still says how many keys it held.
    const pages = allFileEntries(manifestIn(files)).filter((entry) => /pages\/[^/.]+\.html$/.test(entry.path));
    expect(pages.length).toBeGreaterThan(0);
    expect(pages.map((entry) => entry.keyRedactions)).toEqual(pages.map(() => 2 * PAGE_KEYS));
  });
});

/**
 * The archive a run before this fix would have written: every marker back to the key it replaced
 * (raw), a page's data: URIs back to the base64 of the text with the run's keys in it, entries
 * listed with the sha256 and size of those bytes and without keyRedactions.
 */
async function oldStyleArchive(
  files: Map<string, Buffer>,
  key: string,
  keys: readonly string[],
): Promise<{ files: Map<string, Buffer> }> {
  const marker = Buffer.from(KEY_MARKER);
  const out = new Map<string, Buffer>();
  for (const [name, bytes] of files) {
    const parts: Buffer[] = [];
    let at = 0;
    for (let i = bytes.indexOf(marker); i >= 0; i = bytes.indexOf(marker, at)) {
      parts.push(bytes.subarray(at, i), Buffer.from(key));
      at = i + marker.length;
    }
    parts.push(bytes.subarray(at));
    let uri = 0;
    const restored = Buffer.concat(parts)
      .toString('latin1')
      .replace(
        DATA_URI,
        () => `data:application/json;base64,${Buffer.from(dataUriText(keys[uri++] ?? '')).toString('base64')}`,
      );
    out.set(name, Buffer.from(restored, 'latin1'));
  }
  const manifest = manifestIn(out);
  for (const entry of allFileEntries(manifest)) {
    const bytes = out.get(entry.path) as Buffer;
    entry.sha256 = createHash('sha256').update(bytes).digest('hex');
    entry.size = bytes.length;
    delete entry.keyRedactions;
  }
  out.set('manifest.json', Buffer.from(JSON.stringify(manifest, null, 2)));
  return { files: out };
}
