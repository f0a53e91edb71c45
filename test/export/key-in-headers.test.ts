import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { registerExport } from '../../src/cli/commands/export.js';
import { KEY_MARKER, SecretMarker } from '../../src/core/secret-marker.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { allFileEntries, type Manifest } from '../../src/manifest/types.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { exportAccount } from '../../src/export/export-account.js';
import { plainZip } from '../helpers/plain-zip.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { startEchoFront, type EchoFront } from './echo-front.js';
import { keyEncodings } from './hostile-front.js';
import { extractedByPython, filesIn } from './python-zip.js';

// issue 43, item 3: a service that echoed the request's key in its headers (Content-Type,
// Last-Modified, the reason phrase, a redirect's Location, error answers) put it into hundreds of
// manifest values, and verify called the archive intact. Every value kept from the service now
// goes through the redaction bodies go through.

let service: FakeService;
let dir: string;
let front: EchoFront | undefined;

useFakeService({ seed: 43 }, (fixture) => ({ service, dir } = fixture));
afterEach(async () => {
  await front?.close();
  front = undefined;
});

/** Every file under a folder (none when it is gone), by its path inside it. */
async function filesOrNone(folder: string): Promise<Map<string, Buffer>> {
  return existsSync(folder) ? filesIn(folder) : new Map();
}

/**
 * `place: how` for every key found: written in one of the encodings the front uses (looked for
 * byte for byte), or in any mix of the encodings the scan knows (counted by the scan itself).
 */
function keysFound(files: Map<string, Buffer>, keys: readonly string[]): string[] {
  const scan = SecretMarker.of(keys) as SecretMarker;
  const found: string[] = [];
  for (const [name, bytes] of files) {
    for (const key of keys)
      for (const [encoding, text] of Object.entries(keyEncodings(key)))
        if (bytes.includes(Buffer.from(text.trim(), 'latin1'))) found.push(`${name}: ${encoding}`);
    const replacer = scan.replacer();
    replacer.push(bytes);
    replacer.end();
    if (replacer.count > 0) found.push(`${name}: ${replacer.count} found by the scan`);
  }
  return found;
}

/** The CLI in-process; its lines (`json` false) name each error as it happens, quoting its message. */
function exportCli(out: string, key: string, json = true) {
  return runCli(['export', '--out', out, ...(json ? ['--json'] : []), '--concurrency', '4'], {
    register: registerExport,
    env: { RABBIT_API_KEY: key, RABBIT_BASE_URL: (front as EchoFront).baseUrl },
  });
}

const output = (run: { stdout: string; stderr: string }) =>
  new Map([
    ['stdout', Buffer.from(run.stdout)],
    ['stderr', Buffer.from(run.stderr)],
  ]);

describe('the API key a service echoes in its headers is nowhere', () => {
  it('in the archive, its manifest values, stdout, stderr or the work folder, and verify finds the archive intact', async () => {
    front = await startEchoFront(service.baseUrl);
    const key = service.keys.readOnly;
    const out = join(dir, 'echo.zip');
    const run = await exportCli(out, key, false);
    expect(front.echoed).toBeGreaterThan(100);

    const files = await extractedByPython(out, join(dir, 'echo'));
    const work = await filesOrNone(join(dir, '.echo.zip.rabbit-work'));
    expect(keysFound(new Map([...files, ...work, ...output(run)]), [key])).toEqual([]);

    // The values were kept, with the marker where the key was.
    const manifest = JSON.parse((files.get('manifest.json') as Buffer).toString()) as Manifest;
    const entries = allFileEntries(manifest);
    expect(entries.filter((entry) => entry.contentType.includes(KEY_MARKER)).length).toBeGreaterThan(100);
    expect(entries.filter((entry) => entry.lastModified?.includes(KEY_MARKER)).length).toBeGreaterThan(100);
    // The error answers the front made, and the redirects to another origin, were recorded as errors.
    expect(manifest.errors.some((error) => error.status === 403)).toBe(true);
    const refused = manifest.errors.filter((error) => error.status === 302);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((error) => error.message.includes('elsewhere.invalid'))).toBe(true);
    expect(run.stderr).toContain('elsewhere.invalid');

    const report = await verifyArchive(out);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('in what a run cut short by a revoked key leaves (work folder, resumable.json, partial archive), nor after the run that resumes it', async () => {
    front = await startEchoFront(service.baseUrl);
    const keys = [service.keys.readOnly, service.keys.readWrite];
    service.setRevocation({ key: service.keys.readOnly, afterRequests: 150 });
    const out = join(dir, 'cut.zip');
    const first = await exportCli(out, service.keys.readOnly);
    expect(first.code).toBe(3);
    expect(first.stdout).toContain('"keysRefused"');
    const work = await filesOrNone(join(dir, '.cut.zip.rabbit-work'));
    expect(work.has('resumable.json')).toBe(true);
    expect(work.has('journal.jsonl')).toBe(true);
    const partial = await extractedByPython(out, join(dir, 'cut'));
    expect(keysFound(new Map([...work, ...partial, ...output(first)]), keys)).toEqual([]);

    const second = await exportCli(out, service.keys.readWrite);
    // Written whole this time, short only of what the front refused (its 403s).
    const summary = JSON.parse(second.stdout.trim().split('\n').at(-1) as string) as { files: number; errors: number };
    expect(summary.files).toBeGreaterThan(100);
    const files = await extractedByPython(out, join(dir, 'resumed'));
    const after = await filesOrNone(join(dir, '.cut.zip.rabbit-work'));
    expect(keysFound(new Map([...files, ...after, ...output(second)]), keys)).toEqual([]);
    expect((await verifyArchive(out)).ok).toBe(true);
  });

  it('in the values of copies reused from an archive made before headers were redacted (--since)', async () => {
    const key = service.keys.readOnly;
    const first = await exportAccount({ out: join(dir, 'first.zip'), baseUrl: service.baseUrl, keys: [key] });
    // The archive such a run wrote: the echoed key in every entry's Content-Type and Last-Modified.
    const files = await extractedByPython(first.out, join(dir, 'first'));
    const manifest = JSON.parse((files.get('manifest.json') as Buffer).toString()) as Manifest;
    for (const entry of allFileEntries(manifest)) {
      entry.contentType = `${entry.contentType}; echo=${key}`;
      entry.lastModified = `${entry.lastModified ?? ''} ${keyEncodings(key).percentLower}`;
    }
    files.set('manifest.json', Buffer.from(JSON.stringify(manifest, null, 2)));
    const prev = join(dir, 'prev.zip');
    await writeFile(prev, plainZip([...files].map(([name, data]) => ({ name, data }))));
    expect(keysFound(new Map([['prev.zip', await readFile(prev)]]), [key]).length).toBeGreaterThan(0);

    const result = await exportAccount({
      out: join(dir, 'since.zip'),
      baseUrl: service.baseUrl,
      keys: [key],
      since: prev,
    });
    const after = await extractedByPython(result.out, join(dir, 'since'));
    const reused = JSON.parse((after.get('manifest.json') as Buffer).toString()) as Manifest;
    expect(Object.values(reused.prototypes).map((record) => record.origin?.mode)).toContain('reused');
    expect(keysFound(after, [key])).toEqual([]);
    expect(allFileEntries(reused).filter((entry) => entry.contentType.includes(KEY_MARKER)).length).toBeGreaterThan(10);
  });
});
