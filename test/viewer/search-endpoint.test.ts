import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchBoxScript } from '../../src/site/search-box.js';
import { RabbitError } from '../../src/core/errors.js';
import type { SearchEvent, SearchHit, SearchOptions } from '../../src/search/search-archive.js';
import { serveArchive, type ArchiveServer } from '../../src/viewer/serve-archive.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { PAGE, searchArchives } from '../search/search-archive-fixture.js';
import { until } from '../helpers/until.js';
import { python } from '../helpers/tools.js';

const run = promisify(execFile);

/** The archive with its own `search/search-box.js` replaced (and listed as such): what a hostile archive could hold. */
const REPLACE_BOX = `
import hashlib, json, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
evil = b'document.title = "pwned";'
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED) as zout:
    for info in zin.infolist():
        data = zin.read(info)
        if info.filename == 'search/search-box.js':
            data = evil
        if info.filename == 'manifest.json':
            manifest = json.loads(data)
            for f in manifest['files']:
                if f['path'] == 'search/search-box.js':
                    f['sha256'] = hashlib.sha256(evil).hexdigest()
                    f['size'] = len(evil)
            data = json.dumps(manifest).encode('utf-8')
        zout.writestr(info, data)
`;

describe('view: /_search and the policy of the pages with the search box', () => {
  let dir: string;
  let archive: string;
  let hostile: string;
  let server: ArchiveServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-search-view-'));
    ({ archive } = await searchArchives(dir));
    hostile = join(dir, 'hostile.zip');
    await run(python(), ['-c', REPLACE_BOX, archive, hostile]);
    server = await serveArchive(hostile);
  });

  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const lines = async (path: string) => {
    const answer = await fetch(server.url + path);
    return {
      answer,
      values: (await answer.text())
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    };
  };

  it('answers hits as JSON lines and a summary, by the command own search', async () => {
    const { answer, values } = await lines(`_search?q=${encodeURIComponent('ÜBERSICHT')}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(values).toEqual([
      {
        hit: expect.objectContaining({
          kind: 'page',
          page: { id: PAGE, name: 'Start – Übersicht 🏠' },
          match: 'Übersicht',
        }),
      },
      { summary: { hits: 1, prototypes: 5, indexed: 5, scanned: 0 } },
    ]);
    const limited = await lines('_search?q=e&limit=2&kind=element&prototype=3');
    expect(limited.values).toHaveLength(2);
    for (const value of limited.values) expect(value['hit']).toMatchObject({ kind: 'element', prototype: { id: '3' } });
    const empty = await lines(`_search?q=${encodeURIComponent('\u0301')}`);
    expect(empty.answer.status).toBe(400);
    expect(empty.values).toEqual([{ error: expect.objectContaining({ code: 'USAGE' }) }]);
  });

  it('lets the pages with the box run only the tool own box script, and no script elsewhere', async () => {
    for (const path of ['', 'index.html', 'overview/prototype-3.html']) {
      const policy = (await fetch(server.url + path)).headers.get('content-security-policy') ?? '';
      const script = /script-src ([^;]*)/.exec(policy)?.[1];
      expect(script, path).toBe(`${server.url}search/search-box.js`);
      expect(policy).toContain("connect-src 'self'");
    }
    const view = (await fetch(`${server.url}search/prototype-3.js`)).headers.get('content-security-policy') ?? '';
    expect(view).toContain("script-src 'none'");
    // The archive's own file by that name is not what the server sends.
    const box = await fetch(`${server.url}search/search-box.js`);
    expect(await box.text()).toBe(searchBoxScript());
  });

  it('lists the index in the manifest as generated files, which verify checks', async () => {
    const report = await verifyArchive(archive);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    const { stdout } = await run(python(), [
      '-c',
      'import json,sys,zipfile; m=json.loads(zipfile.ZipFile(sys.argv[1]).read("manifest.json")); print(json.dumps([[f["path"],f["source"]] for f in m["files"] if f["path"].startswith("search/")]))',
      archive,
    ]);
    expect((JSON.parse(stdout) as string[][]).sort()).toEqual(
      [
        'index.js',
        'prototype-3.js',
        'prototype-17.js',
        'prototype-42.js',
        'prototype-1001.js',
        'prototype-1002.js',
        'search-box.js',
      ]
        .map((name) => [`search/${name}`, 'generated'])
        .sort(),
    );
  });

  it('runs one search at a time: a newer one stops the one running, whose answer says so', async () => {
    let running = 0;
    let most = 0;
    const started: string[] = [];
    const finish = new Map<string, () => void>();
    /** Yields one hit, then holds until it is stopped or the test lets it finish. */
    async function* held(options: SearchOptions): AsyncGenerator<SearchEvent> {
      running++;
      most = Math.max(most, running);
      started.push(options.query);
      try {
        yield { type: 'hit', hit: { query: options.query } as unknown as SearchHit };
        await new Promise<void>((resolve) => {
          finish.set(options.query, resolve);
          options.signal?.addEventListener('abort', () => resolve());
        });
        if (options.signal?.aborted) throw new RabbitError('INTERRUPTED', 'the search was interrupted');
        yield { type: 'summary', summary: { hits: 1, prototypes: 1, indexed: 1, scanned: 0 } };
      } finally {
        running--;
      }
    }
    const heldServer = await serveArchive(archive, { search: held });
    const ask = (query: string) => fetch(`${heldServer.url}_search?q=${query}`).then((answer) => answer.text());
    try {
      const first = ask('first');
      await until(() => started.join() === 'first', { what: 'the first search started' });
      const second = ask('second');
      await until(() => started.join() === 'first,second', { what: 'the second search started' });
      const third = ask('third');
      await until(() => started.join() === 'first,second,third', { what: 'the third search started' });
      finish.get('third')?.();
      const stopped = { stopped: { code: 'INTERRUPTED', message: 'a newer search replaced this one' } };
      const lines = async (body: Promise<string>) =>
        (await body)
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line) as unknown);
      expect(await lines(first)).toEqual([{ hit: { query: 'first' } }, stopped]);
      expect(await lines(second)).toEqual([{ hit: { query: 'second' } }, stopped]);
      expect(await lines(third)).toEqual([
        { hit: { query: 'third' } },
        { summary: { hits: 1, prototypes: 1, indexed: 1, scanned: 0 } },
      ]);
      expect(most).toBe(1);
    } finally {
      await heldServer.close();
    }
  });
});
