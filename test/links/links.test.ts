import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerLinks } from '../../src/cli/commands/links.js';
import { exportAccount } from '../../src/export/export-account.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import type { LinkFormat } from '../../src/links/link-formats.js';
import { listLinks } from '../../src/links/links-archive.js';
import { readArchive } from '../helpers/archive.js';
import { runCli } from '../helpers/cli.js';
import { requireTool, tool } from '../convert/tools.js';
import { nginxSite } from './nginx-server.js';

/**
 * `links` against an archive of the fake service with every format kept: each URL it lists is
 * fetched from the service and must answer the bytes of the file it names; the sed script is run
 * by GNU sed over text holding every form (with the key in every position of the query), and the
 * nginx rules are checked by `nginx -t` and answered by a running nginx.
 */
const SED = requireTool('/usr/bin/sed', 'sed');

let dir: string;
let service: FakeService;
let archive: string;
let key: string;
let entries: Map<string, { data: Buffer }>;

interface Row {
  kind: string;
  url: string;
  target: string;
}

async function linksOf(format: LinkFormat, base?: string): Promise<string> {
  let out = '';
  await listLinks({ archive, format, ...(base !== undefined ? { base } : {}), write: (chunk) => void (out += chunk) });
  return out;
}

function parseCsv(text: string): Row[] {
  const [header, ...lines] = text.split('\r\n').filter((line) => line !== '');
  expect(header).toBe('kind,url,target');
  return lines.map((line) => {
    const [kind, url, target] = line.split(',') as [string, string, string];
    return { kind, url, target };
  });
}

/** The URL with the key in it, where a wiki or ticket would have had it. */
function keyed(url: string, where: 'first' | 'last'): string {
  const [path, fragment] = url.split('#') as [string, string | undefined];
  const [bare, query] = path.split('?') as [string, string | undefined];
  const keyPart = `api_key=${encodeURIComponent(key)}`;
  const q = query === undefined ? keyPart : where === 'first' ? `${keyPart}&${query}` : `${query}&${keyPart}`;
  return `${bare}?${q}${fragment !== undefined ? `#${fragment}` : ''}`;
}

describe('rabbit-export links', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-links-'));
    service = await startFakeService({ seed: 1 });
    key = service.keys.readOnly;
    archive = join(dir, 'archive.zip');
    const result = await exportAccount({
      out: archive,
      baseUrl: service.baseUrl,
      keys: [key],
      formats: new Set(['json', 'html', 'png', 'xhtml-sketched', 'xhtml-plain']),
    });
    expect(result.complete).toBe(true);
    entries = (await readArchive(archive)).entries;
  }, 120_000);
  afterAll(async () => {
    await service?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('lists every URL form, and each one answers (with the key) exactly the file it names', async () => {
    const rows = parseCsv(await linksOf('csv'));
    const kinds = new Set(rows.map((row) => row.kind));
    expect([...kinds].sort()).toEqual(
      ['api', 'asset', 'editor', 'editor-page', 'html', 'png', 'xhtml-plain', 'xhtml-sketched'].sort(),
    );
    const paths = (kind: string): string[] => rows.filter((r) => r.kind === kind).map((r) => new URL(r.url).pathname);
    for (const form of [
      /^\/rabbit\/api\/prototypes\.json$/,
      /^\/rabbit\/api\/prototypes\/\d+\.json$/,
      /^\/rabbit\/api\/prototypes\/\d+\/pages\.json$/,
      /^\/rabbit\/api\/prototypes\/\d+\/pages\/page\d+\.json$/,
      /^\/rabbit\/api\/prototypes\/\d+\/layers\/layer\d+\.json$/,
      /^\/rabbit\/api\/prototypes\/\d+\/pages\/page\d+\/elements\/element\d+\.json$/,
      /^\/rabbit\/api\/prototypes\/\d+\/layers\/layer\d+\/elements\.json$/,
      /^\/rabbit\/api\/prototypes\/\d+\/discussions\/\d+\.json$/,
      /^\/rabbit\/api\/prototypes\/\d+\/pages\/page\d+\/discussions\.json$/,
    ]) {
      expect(
        paths('api').some((path) => form.test(path)),
        String(form),
      ).toBe(true);
    }
    expect(rows.some((r) => r.url.includes('?') && !/\?mode=(sketched|plain)$/.test(r.url))).toBe(false);
    expect(new Set(rows.map((r) => r.url)).size).toBe(rows.length);

    for (const row of rows.filter((r) => !r.kind.startsWith('editor'))) {
      const entry = entries.get(row.target);
      expect(entry, `${row.url} -> ${row.target}`).toBeDefined();
      const url = row.kind === 'asset' ? row.url : keyed(row.url, 'first');
      const answer = await request(url);
      expect(answer.statusCode, row.url).toBe(200);
      expect(Buffer.from(await answer.body.arrayBuffer()).equals(entry?.data as Buffer), row.url).toBe(true);
    }
    // Every page of the archive has its editor link, to its offline view.
    const pageJson = [...entries.keys()].filter((name) => /^prototypes\/\d+\/r\d+\/pages\/page\d+\.json$/.test(name));
    const editorPages = rows.filter((r) => r.kind === 'editor-page');
    expect(editorPages.length).toBe(pageJson.length);
    for (const row of editorPages) {
      const [, id, pageId] = /\/rabbit\/edit\/(\d+)#page\/(page\d+)$/.exec(row.url) ?? [];
      expect(row.target).toMatch(new RegExp(`^prototypes/${id}/r\\d+/pages/${pageId}\\.view\\.html$`));
      expect(entries.has(row.target)).toBe(true);
    }
    for (const row of rows.filter((r) => r.kind === 'editor')) {
      const id = /\/rabbit\/edit\/(\d+)$/.exec(row.url)?.[1];
      expect(row.target).toBe(`overview/prototype-${id}.html`);
      expect(entries.has(row.target)).toBe(true);
    }
  });

  it('json lists the same rows; --base turns targets into URLs', async () => {
    const csv = parseCsv(await linksOf('csv'));
    const json = JSON.parse(await linksOf('json', 'https://intranet.example/rabbit-archive/')) as Row[];
    expect(json.length).toBe(csv.length);
    for (const [index, row] of json.entries()) {
      expect(row.kind).toBe(csv[index]?.kind);
      expect(row.url).toBe(csv[index]?.url);
      expect(row.target).toBe(`https://intranet.example/rabbit-archive/${csv[index]?.target}`);
    }
  });

  it('the sed script rewrites every form in running text, the key in any place of the query', async () => {
    const base = 'https://intranet.example/archive';
    const rows = parseCsv(await linksOf('csv', base));
    await writeFile(join(dir, 'links.sed'), await linksOf('sed', base));
    const lines: string[] = [];
    const expected: string[] = [];
    for (const row of rows) {
      const forms =
        row.kind === 'asset'
          ? [row.url]
          : row.kind.startsWith('editor')
            ? [row.url, keyed(row.url, 'first').replace(/#.*$/, '') + (row.url.match(/#.*$/)?.[0] ?? '')]
            : [row.url, keyed(row.url, 'first'), keyed(row.url, 'last')];
      // HTML and wiki exports write the separator as `&amp;`; a form without a query gets another
      // parameter so that there is one.
      if (row.kind !== 'asset') {
        const withQuery = row.url.includes('?') ? row.url : row.url.replace(/(#.*)?$/, '?x=1$&');
        for (const where of ['first', 'last'] as const) forms.push(keyed(withQuery, where).replace(/&/g, '&amp;'));
      }
      for (const form of forms) {
        lines.push(`see [the page](${form}) and "${form}", or <${form}>.`);
        expected.push(`see [the page](${row.target}) and "${row.target}", or <${row.target}>.`);
        // Punctuation right after a link ends the sentence; it is not part of the link.
        lines.push(`See ${form}. Then ${form}, and ${form}; or ${form}: is it ${form}? Yes ${form}!`);
        expected.push(
          `See ${row.target}. Then ${row.target}, and ${row.target}; or ${row.target}: is it ${row.target}? Yes ${row.target}!`,
        );
        lines.push(`It ends with ${form}.`, `It ends with ${form},`, `It ends with ${form};`);
        expected.push(`It ends with ${row.target}.`, `It ends with ${row.target},`, `It ends with ${row.target};`);
      }
    }
    // A longer id or page id must not be taken for a shorter one.
    const editor = rows.find((r) => r.kind === 'editor') as Row;
    lines.push(`${editor.url}999 stays`, `ends a sentence: ${editor.url}.`);
    expected.push(`${editor.url}999 stays`, `ends a sentence: ${editor.target}.`);
    await writeFile(join(dir, 'wiki.md'), `${lines.join('\n')}\n`);
    const out = await tool(SED, ['-E', '-f', join(dir, 'links.sed'), join(dir, 'wiki.md')]);
    expect(out.split('\n').slice(0, -1)).toEqual(expected);
    expect(out).not.toContain(key);
  });

  it('nginx accepts the rules (nginx -t) and redirects every old URL, key or not, to its file', async () => {
    const rows = parseCsv(await linksOf('csv', 'https://intranet.example/archive'));
    const site = await nginxSite(dir, await linksOf('nginx', 'https://intranet.example/archive'));
    expect(site.check.code, site.check.stderr).toBe(0);
    expect(site.check.stderr).toContain('syntax is ok');

    await site.serve(async (get) => {
      for (const row of rows.filter((r) => r.kind !== 'editor-page')) {
        const old = new URL(row.kind === 'asset' ? row.url : keyed(row.url, 'last'));
        expect(await get(`${old.pathname}${old.search}`), row.url).toEqual({ status: 301, location: row.target });
      }
      const missing = await get('/rabbit/api/prototypes/3/pages/page0001.xhtml?mode=other');
      expect(missing.status).toBe(404);
    });
  });

  it('the Apache rules are well formed: a RewriteCond only before its RewriteRule, each matching its URL', async () => {
    const rows = parseCsv(await linksOf('csv'));
    const text = await linksOf('apache');
    const lines = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    expect(lines[0]).toBe('RewriteEngine On');
    const rules: { pattern: RegExp; target: string; mode?: string }[] = [];
    const COND = /^RewriteCond %\{QUERY_STRING\} \(\^\|&\)mode=(sketched|plain)\(&\|\$\)$/;
    const body = lines.slice(1);
    // Each condition is followed by its rule, not by another condition nor the end.
    expect(
      body.filter((line, i) => COND.test(line) && (i + 1 === body.length || COND.test(body[i + 1] as string))),
      'a condition without its rule',
    ).toEqual([]);
    let mode: string | undefined;
    for (const line of body) {
      const cond = COND.exec(line);
      if (cond) {
        mode = cond[1];
        continue;
      }
      const rule = /^RewriteRule (\^\/\?\S+\$) (\S+) \[R=301,L,QSD,NE\]$/.exec(line);
      expect(rule, line).not.toBeNull();
      rules.push({ pattern: new RegExp(rule?.[1] as string), target: rule?.[2] as string, ...(mode ? { mode } : {}) });
      mode = undefined;
    }
    expect(mode).toBeUndefined();
    const served = rows.filter((r) => r.kind !== 'editor-page');
    expect(rules.length).toBe(served.length);
    for (const row of served) {
      const url = new URL(row.url);
      const rowMode = url.searchParams.get('mode') ?? undefined;
      const match = rules.filter((r) => r.pattern.test(url.pathname) && r.mode === rowMode);
      expect(
        match.map((r) => r.target),
        row.url,
      ).toEqual([`/${row.target}`]);
    }
  });

  it('the CLI writes the chosen format to stdout and refuses a base that would break the rules', async () => {
    const run = await runCli(['links', archive, '--format', 'nginx'], { register: registerLinks });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('location = "/rabbit/api/prototypes.json" { return 301 "/prototypes.json"; }');
    const bad = await runCli(['links', archive, '--base', 'https://x.example/a b'], { register: registerLinks });
    expect(bad.code).toBe(2);
  });
});
