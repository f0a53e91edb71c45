import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { parseFaultSpec, startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { runCli } from '../helpers/cli.js';
import { skippingClock } from '../helpers/skipping-clock.js';
import { tempDir } from '../helpers/temp.js';
import { python } from '../helpers/tools.js';

// What real servers send beside what the API documents: a byte-order mark before JSON, a 200 with
// no body. The archive is read with Python's zipfile, not with our own reader.

let service: FakeService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const PROTO = '/rabbit/api/prototypes/3';

interface Archived {
  /** Body by API path, for every entry the manifest names with a source. */
  bodies: Map<string, Buffer>;
  /** The offline viewer's overview pages, by entry name. */
  overview: Record<string, string>;
  errors: Array<{ source: string; code?: string; attempts?: number }>;
  complete: boolean;
}

const READ_ARCHIVE = `
import base64, json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    manifest = json.loads(z.read("manifest.json"))
    files = []
    def walk(value):
        if isinstance(value, dict):
            if isinstance(value.get("path"), str) and isinstance(value.get("source"), str):
                files.append(value)
            for item in value.values(): walk(item)
        elif isinstance(value, list):
            for item in value: walk(item)
    walk(manifest)
    bodies = {f["source"]: base64.b64encode(z.read(f["path"])).decode() for f in files if f["source"].startswith("/rabbit/api/")}
    overview = {n: z.read(n).decode() for n in z.namelist() if n.startswith("overview/")}
    print(json.dumps({"bodies": bodies, "overview": overview, "errors": manifest["errors"], "complete": manifest["complete"]}))
`;

async function readArchive(zip: string): Promise<Archived> {
  const { stdout } = await promisify(execFile)(python(), ['-c', READ_ARCHIVE, zip], { maxBuffer: 64 * 1024 * 1024 });
  const read = JSON.parse(stdout) as Omit<Archived, 'bodies'> & { bodies: Record<string, string> };
  const bodies = new Map(Object.entries(read.bodies).map(([source, b64]) => [source, Buffer.from(b64, 'base64')]));
  return { ...read, bodies };
}

async function exportWith(faults: string, extra: string[] = []) {
  service = await startFakeService({ faults: parseFaultSpec(faults) });
  const out = join(await tempDir(), 'served.zip');
  // Backoffs before a retry pass on a clock that skips them.
  const run = await runCli(['export', '--out', out, '--base-url', service.baseUrl, ...extra], {
    register: registerExport,
    env: { RABBIT_API_KEY: service.keys.readOnly },
    clock: skippingClock(),
  });
  return { run, out, svc: service };
}

/** The body the service sends for `source` now, faults included. */
async function served(svc: FakeService, source: string): Promise<Buffer> {
  const response = await fetch(`${svc.baseUrl}${source}?api_key=${svc.keys.readOnly}`);
  expect(response.status, source).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

describe('bodies as real servers send them', () => {
  it('a byte-order mark before every JSON answer: the export completes and keeps each body as sent', async () => {
    const { run, out, svc } = await exportWith('rate=1,kinds=bom');
    expect(run.stderr).not.toContain('rabbit-export:');
    expect(run.code).toBe(0);
    const archive = await readArchive(out);
    expect(archive.complete).toBe(true);
    expect(archive.errors).toEqual([]);
    const json = [...archive.bodies].filter(([source]) => source.endsWith('.json'));
    // Every prototype's lists and metadata were read through the mark, down to the elements.
    expect(json.length).toBeGreaterThan(100);
    expect(archive.bodies.has(`${PROTO}/pages/page0001/elements/element3.json`)).toBe(true);
    for (const [source, body] of json) {
      expect(body.subarray(0, 3), source).toEqual(BOM);
      expect(body.equals(await served(svc, source)), source).toBe(true);
    }
    // The archive's readers take the bodies as the export did: mark skipped, nothing left out.
    expect(archive.overview['overview/prototype-3.html']).toContain('<title>foo type – Rabbit archive</title>');
    const converted = join(await tempDir(), 'drawio');
    const convert = await runCli(['convert', out, '--to', 'drawio', '--out', converted], { register: registerConvert });
    expect(convert.code).toBe(0);
    const report = JSON.parse(await readFile(join(converted, 'convert-report.json'), 'utf8')) as {
      complete: boolean;
      prototypes: Array<{ skipped: unknown[] }>;
    };
    expect(report.prototypes.flatMap((proto) => proto.skipped)).toEqual([]);
    expect(report.complete).toBe(true);
    const restore = await runCli(
      ['restore', out, '--prototype', '3', '--dry-run', '--base-url', svc.baseUrl, '--retries', '1'],
      { register: registerRestore, env: { RABBIT_API_KEY: svc.keys.readWrite } },
    );
    expect(restore.code).toBe(0);
    expect(restore.stdout + restore.stderr).toContain('0 to create, 0 to update, 0 to delete');
  });

  it('an empty 200 is retried, and the body of the next attempt is stored', async () => {
    const paths = [
      `${PROTO}.json`,
      `${PROTO}/pages.json`,
      `${PROTO}/pages/page0001.png`,
      `${PROTO}/pages/page0001.html`,
    ];
    const { run, out, svc } = await exportWith(paths.map((path) => `path=${path}:empty-body*2`).join(';'), [
      '--retries',
      '3',
    ]);
    expect(run.stderr).not.toContain('rabbit-export:');
    expect(run.code).toBe(0);
    expect(svc.stats.faultsInjected).toBe(8);
    const archive = await readArchive(out);
    expect(archive.errors).toEqual([]);
    for (const path of paths) {
      const body = archive.bodies.get(path);
      expect(body?.length, path).toBeGreaterThan(0);
      expect(body?.equals(await served(svc, path)), path).toBe(true);
    }
  });

  it('a path that is always empty is recorded as a failure after its attempts, exit 3, and not stored', async () => {
    const png = `${PROTO}/pages/page0001.png`;
    const meta = `${PROTO}/pages/page0001/elements/element3.json`;
    const { run, out } = await exportWith(`path=${png}:empty-body;path=${meta}:empty-body`, ['--retries', '2']);
    expect(run.code).toBe(3);
    const archive = await readArchive(out);
    expect(archive.complete).toBe(false);
    expect(archive.errors.map(({ source, code, attempts }) => ({ source, code, attempts }))).toEqual(
      expect.arrayContaining([
        { source: png, code: 'BODY_EMPTY', attempts: 2 },
        { source: meta, code: 'BODY_EMPTY', attempts: 2 },
      ]),
    );
    expect(archive.bodies.has(png)).toBe(false);
    expect(archive.bodies.has(meta)).toBe(false);
    expect(archive.bodies.has(`${PROTO}/pages/page7830.png`)).toBe(true);
  });
});
