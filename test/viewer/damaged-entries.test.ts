import { execFile } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { startFakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { serveArchive, type ViewEvent } from '../../src/viewer/serve-archive.js';
import { startCli } from '../helpers/cli.js';
import { requireTool, python } from '../helpers/tools.js';
import { writeZip, type ZipSource } from '../helpers/write-zip.js';

/**
 * `view` on archives damaged after they were written: an entry whose bytes were rewritten (the zip
 * still valid, its CRC-32 recomputed, so only the manifest's SHA-256 can tell), and one whose
 * deflate data is corrupt. Neither may be served, whole or in part.
 */
requireTool('python3');

const run = promisify(execFile);

interface Entry {
  name: string;
  data: Buffer;
  compressionMethod: number;
  dataOffset: number;
  compressedSize: number;
}

/** Every entry of a zip as yauzl (a reader we did not write) reads it. */
async function entriesOf(path: string): Promise<Entry[]> {
  const zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false });
  const handle = await open(path, 'r');
  try {
    const out: Entry[] = [];
    for await (const entry of zip.eachEntry()) {
      const chunks: Buffer[] = [];
      for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      const header = Buffer.alloc(30);
      await handle.read(header, 0, 30, entry.relativeOffsetOfLocalHeader);
      out.push({
        name: entry.fileName,
        data: Buffer.concat(chunks),
        compressionMethod: entry.compressionMethod,
        dataOffset: entry.relativeOffsetOfLocalHeader + 30 + header.readUInt16LE(26) + header.readUInt16LE(28),
        compressedSize: entry.compressedSize,
      });
    }
    return out;
  } finally {
    await handle.close();
    zip.close();
  }
}

let dir: string;
let original: Entry[];
let rewritten: string;
let corrupt: string;
/** An entry whose bytes are changed, and one whose compressed data is broken. */
let changed: Entry;
let broken: Entry;
let intact: Entry;

beforeAll(async () => {
  // Not tempDir(): that one is emptied after each test, and these share their archives.
  dir = await mkdtemp(join(tmpdir(), 'rabbit-view-damaged-'));
  const service = await startFakeService({ seed: 1 });
  const out = join(dir, 'a.zip');
  try {
    await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly], formats: new Set(['json']) });
  } finally {
    await service.close();
  }
  original = await entriesOf(out);
  const json = original.filter((e) => e.name.startsWith('prototypes/') && e.name.endsWith('.json'));
  changed = json[0] as Entry;
  intact = json[1] as Entry;
  rewritten = join(dir, 'rewritten.zip');
  const sources = (swap?: Entry, data?: Buffer): ZipSource[] =>
    original.map((e) => ({ name: e.name, data: e === swap ? (data as Buffer) : e.data, store: false }));
  // Same length, one byte changed: only the manifest's SHA-256 can tell.
  const altered = Buffer.from(changed.data);
  altered[altered.length - 2] = altered[altered.length - 2] === 0x30 ? 0x31 : 0x30;
  // And an entry the manifest does not list: nothing vouches for it.
  await writeZip(
    [...sources(changed, altered), { name: 'extra.html', data: '<script>alert(1)</script>', store: false }],
    rewritten,
  );
  corrupt = join(dir, 'corrupt.zip');
  await writeZip(sources(), corrupt);
  const laidOut = await entriesOf(corrupt);
  broken = laidOut
    .filter((e) => e.compressionMethod === 8 && e.name.startsWith('prototypes/'))
    .sort((a, b) => b.compressedSize - a.compressedSize)[0] as Entry;
  const handle = await open(corrupt, 'r+');
  try {
    const middle = broken.dataOffset + Math.floor(broken.compressedSize / 3);
    await handle.write(Buffer.alloc(Math.min(64, Math.floor(broken.compressedSize / 3)), 0xff), 0, undefined, middle);
  } finally {
    await handle.close();
  }
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('view refuses damaged entries', () => {
  it('the rewritten archive is a valid zip to Python (so the damage is only in what the manifest records)', async () => {
    const { stdout } = await run(python(), [
      '-c',
      'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).testzip())',
      rewritten,
    ]);
    expect(stdout.trim()).toBe('None');
  });

  it('answers an entry that fails its SHA-256 with an error page, and reports it', async () => {
    const events: ViewEvent[] = [];
    const server = await serveArchive(rewritten, { onEvent: (e) => events.push(e) });
    try {
      const bad = await fetch(`${server.url}${changed.name}`);
      expect(bad.status).toBe(500);
      expect(bad.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const page = await bad.text();
      expect(page).toContain(changed.name);
      expect(page).toContain('SHA-256');
      expect(page).not.toContain(changed.data.toString('utf8').slice(0, 40));
      expect(events).toEqual([{ type: 'refused', entry: changed.name, reason: 'checksum', status: 500 }]);
      const good = await fetch(`${server.url}${intact.name}`);
      expect(good.status).toBe(200);
      expect(Buffer.from(await good.arrayBuffer()).equals(intact.data)).toBe(true);
      expect(good.headers.get('referrer-policy')).toBe('no-referrer');
      expect(good.headers.get('x-content-type-options')).toBe('nosniff');
      expect(good.headers.get('content-security-policy')).toMatch(/default-src 'none'.*sandbox/);
    } finally {
      await server.close();
    }
  });

  it('checks an entry too large to hold in a first reading, and streams only one that passes', async () => {
    const events: ViewEvent[] = [];
    const server = await serveArchive(rewritten, { onEvent: (e) => events.push(e), checkedInMemory: 0 });
    try {
      const bad = await fetch(`${server.url}${changed.name}`);
      expect(bad.status).toBe(500);
      expect(await bad.text()).toContain('SHA-256');
      const good = await fetch(`${server.url}${intact.name}`);
      expect(good.status).toBe(200);
      expect(Buffer.from(await good.arrayBuffer()).equals(intact.data)).toBe(true);
      expect(events.map((e) => e.reason)).toEqual(['checksum']);
      const unlisted = await fetch(`${server.url}extra.html`);
      expect(unlisted.status).toBe(404);
      expect(await unlisted.text()).not.toContain('<script>');
      expect(events.at(-1)).toEqual({ type: 'refused', entry: 'extra.html', reason: 'unlisted', status: 404 });
    } finally {
      await server.close();
    }
  });

  it('answers an entry whose deflate data is corrupt with an error page, never an empty or partial 200', async () => {
    const events: ViewEvent[] = [];
    const server = await serveArchive(corrupt, { onEvent: (e) => events.push(e) });
    try {
      const bad = await fetch(`${server.url}${broken.name}`);
      expect(bad.status).toBe(500);
      const page = await bad.text();
      expect(page).toContain(broken.name);
      expect(page).toContain('cannot be read');
      expect(events).toEqual([{ type: 'refused', entry: broken.name, reason: 'unreadable', status: 500 }]);
      const head = await fetch(`${server.url}${broken.name}`, { method: 'HEAD' });
      expect(head.status).toBe(500);
    } finally {
      await server.close();
    }
  });

  it('will not serve an archive whose manifest is gone: nothing could be checked', async () => {
    const bare = join(dir, 'bare.zip');
    await writeZip(
      original.filter((e) => e.name !== 'manifest.json').map((e) => ({ name: e.name, data: e.data, store: false })),
      bare,
    );
    await expect(serveArchive(bare)).rejects.toMatchObject({ code: 'ARCHIVE_CORRUPT' });
  });

  it('rabbit-export view logs each refusal on stderr', async () => {
    const { child, done } = startCli(['view', rewritten, '--port', '0']);
    try {
      let stdout = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout?.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          // The printed address ends with the token's path segment: everything is served under it.
          const found = / at (http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/)\n/.exec(stdout)?.[1];
          if (found !== undefined) resolve(found);
        });
        child.on('close', () => reject(new Error(`view ended before it served: ${stdout}`)));
      });
      const bad = await fetch(`${url}${changed.name}`);
      expect(bad.status).toBe(500);
      await bad.arrayBuffer();
    } finally {
      child.kill('SIGTERM');
    }
    const result = await done;
    expect(result.stderr).toContain(`refused ${JSON.stringify(changed.name)} (checksum, HTTP 500)`);
    expect(result.stderr).toContain(`rabbit-export verify ${rewritten}`);
  });
});
