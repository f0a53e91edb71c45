import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerLinks } from '../../src/cli/commands/links.js';
import { isRabbitError } from '../../src/core/errors.js';
import type { LinkFormat } from '../../src/links/link-formats.js';
import { LINK_FORMATS } from '../../src/links/link-formats.js';
import { listLinks } from '../../src/links/links-archive.js';
import type { FileEntry, Manifest } from '../../src/manifest/types.js';
import { runCli } from '../helpers/cli.js';
import { requireTool, runTool } from '../convert/tools.js';
import { nginxSite } from './nginx-server.js';
import { sampleManifest, writeSampleArchive } from '../verify/sample-archive.js';

/**
 * `links` on archives someone else made: every value it writes comes from the manifest, so a
 * crafted one must neither add a directive to the nginx or Apache rules nor a command to the sed
 * script, nor a formula to the CSV. A raw line break is refused (the manifest is not one of ours);
 * what a URL path may hold (`;`, `'`, `$`, and percent-escapes of quotes and braces) is quoted, and
 * nginx itself, GNU sed and a regex engine judge the result.
 */
const SED = requireTool('/usr/bin/sed', 'sed');

/** What an attacker appends to a value: a server block that lists and serves /etc. */
const LEAK = '\n  location /leak/ { alias /etc/; autoindex on; }\n#';
/** The same, percent-encoded into a path a URL parser would leave as it is (`"`, `}`, `{` and spaces escaped). */
const ENCODED_LEAK =
  '/assets/x%22%3B%20%7D%20location%20%2Fleak%2F%20%7B%20alias%20%2Fetc%2F%3B%20autoindex%20on%3B%20%7D';
/** Characters a URL path keeps unescaped, each meaningful to some output. */
const PUNCTUATED = "/assets/a;b'$c(d)[e]|f^g*h+i=j@k!l~m&n.css";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-hostile-links-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function asset(path: string, source: string): FileEntry {
  return { path, source, sha256: 'a'.repeat(64), size: 1, contentType: 'text/css', lastModified: null };
}

async function archiveWith(change: (manifest: Manifest) => void): Promise<string> {
  const manifest = sampleManifest();
  change(manifest);
  return writeSampleArchive(dir, { manifest });
}

async function linksOf(archive: string, format: LinkFormat, base?: string): Promise<string> {
  let out = '';
  await listLinks({ archive, format, ...(base !== undefined ? { base } : {}), write: (chunk) => void (out += chunk) });
  return out;
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isRabbitError(error)) throw new Error(`expected a refusal, got ${String(error)}`);
  return { code: error.code, message: error.message };
}

describe('links on a crafted archive', () => {
  it.each([
    {
      label: 'the base URL',
      place: 'source.baseUrl',
      change: (m: Manifest) => void (m.source.baseUrl = `https://rabbit.example${LEAK}`),
    },
    {
      label: "an entry's source",
      place: 'files[1].source',
      change: (m: Manifest) => void m.files.push(asset('assets/evil.css', `/assets/evil.css${LEAK}`)),
    },
  ])('refuses $label holding a line break and a location block, in every format', async ({ place, change }) => {
    const archive = await archiveWith(change);
    for (const format of LINK_FORMATS) {
      const refused = await refusal(linksOf(archive, format));
      expect(refused.code, format).toBe('ARCHIVE_CORRUPT');
      expect(refused.message, format).toContain(place);
    }
    // The CLI says which value and what to do, and writes no rule at all.
    const run = await runCli(['links', archive, '--format', 'nginx'], { register: registerLinks });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(place);
    expect(run.stderr).toMatch(
      /changed after export or not written by rabbit-export\nnext: if [^\n]+ is a copy, copy it again/,
    );
    expect(run.stderr).not.toMatch(/\n\s*at /); // no stack trace
  });

  it('nginx reads an encoded directive as part of one string: nginx -t passes and /etc is never served', async () => {
    const archive = await archiveWith((m) => {
      m.files.push(asset('assets/evil.css', ENCODED_LEAK), asset('assets/punctuated.css', PUNCTUATED));
    });
    const site = await nginxSite(dir, await linksOf(archive, 'nginx', 'https://intranet.example/archive'));
    expect(site.check.code, site.check.stderr).toBe(0);
    await site.serve(async (get) => {
      expect(await get('/leak/passwd')).toMatchObject({ status: 404 });
      expect(await get('/leak/')).toMatchObject({ status: 404 });
      // Each crafted path is one location that redirects to its own file.
      expect(await get(ENCODED_LEAK)).toEqual({
        status: 301,
        location: 'https://intranet.example/archive/assets/evil.css',
      });
      expect(await get(PUNCTUATED)).toEqual({
        status: 301,
        location: 'https://intranet.example/archive/assets/punctuated.css',
      });
    });
  });

  it('Apache rules stay one directive a line, each pattern matching exactly its decoded path', async () => {
    const archive = await archiveWith((m) => {
      m.files.push(asset('assets/evil.css', ENCODED_LEAK), asset('assets/punctuated.css', PUNCTUATED));
    });
    const lines = (await linksOf(archive, 'apache')).split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    const rules = lines.slice(1).map((line) => /^RewriteRule (\^\/\?\S+\$) (\/\S+) \[R=301,L,QSD,NE\]$/.exec(line));
    expect(lines[0]).toBe('RewriteEngine On');
    for (const [i, rule] of rules.entries()) expect(rule, lines[i + 1]).not.toBeNull();
    const match = (path: string) =>
      rules.filter((rule) => new RegExp(rule?.[1] as string).test(path)).map((r) => r?.[2]);
    expect(match(decodeURIComponent(ENCODED_LEAK))).toEqual(['/assets/evil.css']);
    expect(match(PUNCTUATED)).toEqual(['/assets/punctuated.css']);
    expect(match('/leak/passwd')).toEqual([]);
  });

  it('a sed script from crafted sources does only its replacements: no w or e command gets in', async () => {
    const marker = join(dir, 'written-by-sed');
    const sources = [`/assets/k,x,w${marker}`, `/assets/q,touch,e`, PUNCTUATED, ENCODED_LEAK];
    const archive = await archiveWith((m) => {
      sources.forEach((source, i) => m.files.push(asset(`assets/file${i}.css`, source)));
    });
    await writeFile(join(dir, 'links.sed'), await linksOf(archive, 'sed', 'https://intranet.example/archive'));
    const text = sources.map((source) => `see https://rabbit.example${source} here`).join('\n') + '\n';
    await writeFile(join(dir, 'text.md'), text);
    const run = await runTool(SED, ['-E', '-f', join(dir, 'links.sed'), join(dir, 'text.md')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      sources.map((_, i) => `see https://intranet.example/archive/assets/file${i}.css here`).join('\n') + '\n',
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('CSV cells that a spreadsheet would take for a formula start with a quote; JSON keeps every value as data', async () => {
    const archive = await archiveWith((m) => {
      m.files.push(asset('-2-3', '/assets/minus.css'), asset('assets/comma.css', '/assets/a,b.css'));
    });
    const csv = (await linksOf(archive, 'csv')).split('\r\n');
    expect(csv).toContain("asset,https://rabbit.example/assets/minus.css,'-2-3");
    expect(csv).toContain('asset,"https://rabbit.example/assets/a,b.css",assets/comma.css');
    const rows = JSON.parse(await linksOf(archive, 'json')) as Array<{ url: string; target: string }>;
    expect(rows).toContainEqual({
      kind: 'asset',
      url: 'https://rabbit.example/assets/a,b.css',
      target: 'assets/comma.css',
    });
  });
});
