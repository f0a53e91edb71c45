import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { writeRequests, type FakeService } from '../../src/fake-service/index.js';
import { readArchive } from '../helpers/archive.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { writeZip } from '../helpers/write-zip.js';
import { PROTO, damage, exportPrototype } from './restore-helpers.js';

/**
 * An element body nested 100,000 deep (200 KB, under the element read cap): JSON.parse reads it,
 * but anything that recurses into it or serializes it overflows the stack. The restore measures
 * every body without recursion first, skips that element by its id, and plans the rest.
 */
let service: FakeService;
let dir: string;

useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

const DEPTH = 100_000;

/** The archive with one element's body replaced by `body`, its manifest entry updated to match. */
async function withElementBody(archive: string, body: string): Promise<{ path: string; element: string }> {
  const { manifest, entries } = await readArchive(archive);
  const revision = manifest.prototypes[PROTO]!.revisions[String(manifest.prototypes[PROTO]!.revision)]!;
  const entry = revision.files.find((file) => /\/pages\/page0002\/elements\/element\d+\.json$/.test(file.path))!;
  const element = /(element\d+)\.json$/.exec(entry.path)![1]!;
  const data = Buffer.from(body.replace('ELEMENT', element));
  entries.set(entry.path, { data, method: 8 });
  entry.size = data.length;
  entry.sha256 = createHash('sha256').update(data).digest('hex');
  entries.set('manifest.json', { data: Buffer.from(JSON.stringify(manifest)), method: 8 });
  const path = join(dir, 'deep.zip');
  await writeZip(
    [...entries].map(([name, { data: bytes }]) => ({ name, data: bytes, store: false })),
    path,
  );
  return { path, element };
}

describe('restore of an archive with a crafted element', () => {
  let archive: string;
  beforeEach(async () => {
    archive = await exportPrototype(service, dir, 'night.zip');
  });

  it(`--dry-run skips an element nested ${DEPTH} deep by its id and plans the rest, without a stack overflow`, async () => {
    damage(service);
    const deep = `{"id":"ELEMENT","type":"box","x":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`;
    const { path, element } = await withElementBody(archive, deep);
    service.stats.reset();
    const run = await runCli(['restore', path, '--prototype', PROTO, '--dry-run', '--json'], {
      register: registerRestore,
      env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
    });
    expect(run.stderr).not.toMatch(/Maximum call stack|RangeError|\n\s+at /);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0]!) as {
      dryRun: boolean;
      create: number;
      update: number;
      skipped: Array<{ parent?: string; element?: string; reason: string }>;
      error?: unknown;
    };
    expect(summary.error).toBeUndefined();
    expect(run.code).toBe(EXIT.incomplete);
    expect(run.stderr).toMatch(new RegExp(`skipped ${element} on page0002: the element is nested too deeply`));
    expect(summary.dryRun).toBe(true);
    expect(summary.skipped).toEqual([
      { parent: 'page0002', element, reason: expect.stringMatching(/nested too deeply/) as unknown as string },
    ]);
    // The damage on page0001 and layer1 is still planned: the deep element cost only itself.
    expect(summary.create).toBe(4);
    expect(summary.update).toBe(2);
    expect(writeRequests(service.stats)).toBe(0);
  });
});
