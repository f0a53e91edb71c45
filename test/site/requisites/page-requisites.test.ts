import { describe, expect, it } from 'vitest';
import type { FetchContext } from '../../../src/crawl/fetch-resource.js';
import { Frontier } from '../../../src/crawl/frontier.js';
import { PageRequisites } from '../../../src/site/requisites/collect-assets.js';
import type { ArchiveModel } from '../../../src/manifest/archive-model.js';
import type { StoredFile } from '../../../src/storage/stored-file.js';
import type { ManifestError } from '../../../src/manifest/types.js';

// The collector as the crawl drives it, with a frontier that starts nothing: what it schedules
// while the crawl runs, and what it leaves for the pass after the crawl, are seen without a server.

const service = { origin: 'http://127.0.0.1:1', basePath: '' };
const PNG = '/rabbit/api/prototypes/3/pages/page1.png';
const OTHER = '/rabbit/api/prototypes/3/pages/page9.png';
const html = `<link rel="stylesheet" href="/rabbit/static/a.css"><img src="${PNG}"><img src="${OTHER}"><img src="https://cdn.example.com/x.png">`;

function page(name: string, data?: Buffer): StoredFile {
  return {
    path: `prototypes/3/r6/pages/${name}.html`,
    source: `/rabbit/api/prototypes/3/pages/${name}.html`,
    sha256: '0'.repeat(64),
    size: html.length,
    file: '/nowhere',
    contentType: 'application/xhtml+xml',
    lastModified: null,
    ...(data ? { data } : {}),
  };
}

function setup(archived: StoredFile[], where: { origin: string; basePath: string } = service) {
  const frontier = new Frontier({ concurrency: 1 });
  frontier.pause();
  const errors: ManifestError[] = [];
  const model = {
    addError: (error: ManifestError) => errors.push(error),
    addFile: () => undefined,
    prototypeIds: () => ['3'],
    files: async (id: string | undefined) => (id === '3' ? archived : []),
  } as unknown as ArchiveModel;
  const fetch = { spool: { read: async () => Buffer.from(html, 'latin1') } } as unknown as FetchContext;
  return { frontier, errors, requisites: new PageRequisites({ fetch, frontier, model, service: where }) };
}

describe('page requisites during the crawl', () => {
  it("schedules a stored page's assets at once, leaving references to API resources for after the crawl", async () => {
    const png = { ...page('page1'), path: 'prototypes/3/r6/pages/page1.png', source: PNG };
    const { frontier, errors, requisites } = setup([page('page1'), png]);
    requisites.pageStored(page('page1', Buffer.from(html, 'latin1')), '3');
    // Only the stylesheet: the page PNGs may be (and one is) archived by the crawl.
    expect(frontier.queued).toBe(1);
    requisites.pageStored(page('page2', Buffer.from(html, 'latin1')), '3');
    expect(frontier.queued).toBe(1);

    // --max-duration halts the frontier before the stylesheet's request could start.
    frontier.halt();
    const catalog = await requisites.finish((entry) => ({ ...entry, file: '/nowhere' }));
    expect(errors.map((e) => [e.source, e.code]).sort()).toEqual([
      ['/rabbit/api/prototypes/3/pages/page9.png', 'DEADLINE'],
      ['/rabbit/static/a.css', 'DEADLINE'],
    ]);
    expect([...catalog.foreign.keys()]).toEqual(['https://cdn.example.com/x.png']);
    expect(catalog.archived.size).toBe(0);
  });

  it('reads back after the crawl a page the crawl stored without its bytes in memory', async () => {
    const { frontier, errors, requisites } = setup([page('page1')]);
    requisites.pageStored(page('page1'), '3');
    expect(frontier.queued).toBe(0);
    frontier.halt();
    await requisites.finish((entry) => ({ ...entry, file: '/nowhere' }));
    expect(errors.map((e) => e.source).sort()).toEqual([OTHER, PNG, '/rabbit/static/a.css'].sort());
  });

  it('records an asset on the service host outside its base path as missing, once, and still lists it', async () => {
    const below = { origin: 'http://127.0.0.1:1', basePath: '/tool' };
    const { frontier, errors, requisites } = setup([], below);
    const named = `<img src="/rabbit/static/logo.png"><img src="http://127.0.0.1:1/rabbit/static/logo.png">`;
    const stored = {
      ...page('page1', Buffer.from(named, 'latin1')),
      source: '/rabbit/api/prototypes/3/pages/page1.html',
    };
    requisites.pageStored(stored, '3');
    requisites.pageStored({ ...stored, path: 'prototypes/3/r6/pages/page2.html' }, '3');
    expect(frontier.queued).toBe(0);
    expect(errors.map((e) => [e.source, e.code])).toEqual([['/rabbit/static/logo.png', 'BAD_SHAPE']]);
    expect([...requisites.catalog.foreign.keys()]).toEqual(['http://127.0.0.1:1/rabbit/static/logo.png']);
  });

  it('records, and never requests, an asset whose path no manifest reader would accept', async () => {
    // A line separator or a newline, percent-escaped: listed as a source, it would make the archive
    // fail its own verify (and links could write no rule for it).
    const { frontier, errors, requisites } = setup([]);
    const named = `<img src="/rabbit/static/a%E2%80%A8b.png"><img src="/rabbit/static/c%0Ad.png"><img src="/rabbit/static/ok.png">`;
    requisites.pageStored(page('page1', Buffer.from(named, 'latin1')), '3');
    expect(frontier.queued).toBe(1);
    expect(errors.map((e) => [e.source, e.code])).toEqual([
      ['/rabbit/static/a%E2%80%A8b.png', 'BAD_SHAPE'],
      ['/rabbit/static/c%0Ad.png', 'BAD_SHAPE'],
    ]);
  });
});
