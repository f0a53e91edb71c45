import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerVerify } from '../../src/cli/commands/verify.js';
import type { Manifest } from '../../src/manifest/types.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { runCli } from '../helpers/cli.js';
import { sampleFiles, sampleManifest, writeSampleArchive } from './sample-archive.js';

/**
 * A manifest whose values were crafted is not intact, whatever its checksums say: verify names
 * the value by its place and the verdict is not OK. Each case is a value the exporter never
 * writes, and that a reading command would have written into a rule, a path or a terminal.
 */
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'verify-hostile-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const PAGE = 'prototypes.4711.revisions.17.files[2]';
type Change = (manifest: Manifest) => void;
const page = (m: Manifest) => m.prototypes['4711']!.revisions['17']!.files[2]!;

const CASES: Array<{ label: string; place: string; change: Change }> = [
  {
    label: 'a base URL that ends its line and writes a location block',
    place: 'source.baseUrl',
    change: (m) => void (m.source.baseUrl = 'https://rabbit.example\nlocation /leak/ { alias /etc/; autoindex on; }'),
  },
  { label: 'a base URL with a quote', place: 'source.baseUrl', change: (m) => void (m.source.baseUrl += '/"x') },
  {
    label: 'a base URL that is not http(s)',
    place: 'source.baseUrl',
    change: (m) => void (m.source.baseUrl = 'javascript:alert(1)'),
  },
  {
    label: 'a source with a line break and a directive',
    place: `${PAGE}.source`,
    change: (m) => void (page(m).source += '\nlocation /leak/ { alias /etc/; autoindex on; }'),
  },
  { label: 'a source with a space', place: `${PAGE}.source`, change: (m) => void (page(m).source += ' x') },
  {
    label: 'a source climbing out',
    place: `${PAGE}.source`,
    change: (m) => void (page(m).source = '/rabbit/api/../../etc/passwd'),
  },
  { label: 'a relative source', place: `${PAGE}.source`, change: (m) => void (page(m).source = 'etc/passwd') },
  { label: 'a path with ".."', place: 'files[0].path', change: (m) => void (m.files[0]!.path = 'a/../../etc/passwd') },
  { label: 'an absolute path', place: 'files[0].path', change: (m) => void (m.files[0]!.path = '/etc/passwd') },
  { label: 'a path with a backslash', place: 'files[0].path', change: (m) => void (m.files[0]!.path = 'a\\b.json') },
  { label: 'a path with NUL', place: 'files[0].path', change: (m) => void (m.files[0]!.path = 'a\u0000b.json') },
  {
    label: 'a content type with an escape sequence',
    place: `${PAGE}.contentType`,
    change: (m) => void (page(m).contentType = 'text/html\u001b[2J'),
  },
  { label: 'a size that is not a count', place: 'files[0].size', change: (m) => void (m.files[0]!.size = -1) },
  {
    label: 'an error source with a line break',
    place: 'errors[0].source',
    change: (m) => void m.errors.push({ source: '/rabbit/api/x\nOK: all intact', message: 'HTTP 500' }),
  },
];

describe('verify on a crafted manifest', () => {
  it.each(CASES)('names $label by its place', async ({ place, change }) => {
    const manifest = sampleManifest();
    change(manifest);
    const report = await verifyArchive(await writeSampleArchive(dir, { manifest }));
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.kind)).toEqual(['manifest-invalid']);
    expect(report.problems[0]?.detail.startsWith(`${place} `), report.problems[0]?.detail).toBe(true);
  });

  it('accepts what the exporter writes: an asset path outside the API, a page view with its mode, unknown count fields', async () => {
    const manifest = sampleManifest();
    const asset = { ...manifest.files[0]!, path: 'assets/a.css', source: "/static/a;b'$c(d)[e]%20f.css" };
    manifest.files.push(asset);
    // An older page view, its mode in its source and in its name (the page's bytes, for a listed size and sha256).
    const view = 'prototypes/4711/r17/pages/page0001.sketched.xhtml';
    const source = '/rabbit/api/prototypes/4711/pages/page0001.xhtml?mode=sketched';
    manifest.prototypes['4711']!.revisions['17']!.files.push({ ...page(manifest), path: view, source });
    const data = sampleFiles().byPrototype['4711']!.files[2]!.body;
    Object.assign(page(manifest), { keyRedactions: 2 });
    const archive = await writeSampleArchive(dir, { manifest, extra: [{ name: view, data, store: false }] });
    const report = await verifyArchive(archive);
    // The extra entry is listed but not in the zip: that, and nothing about its values.
    expect(report.problems.map((p) => `${p.kind} ${p.path ?? ''}`)).toEqual(['missing assets/a.css']);
  });

  it('the CLI says FAILED and names the value, without echoing what it would have written', async () => {
    const manifest = sampleManifest();
    manifest.source.baseUrl = 'https://rabbit.example\nlocation /leak/ { alias /etc/; }';
    const run = await runCli(['verify', await writeSampleArchive(dir, { manifest })], { register: registerVerify });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('source.baseUrl holds a control character (U+000A)');
    expect(run.stdout).toMatch(/FAILED/);
    expect(run.stdout).not.toContain('location /leak/');
  });
});
