import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { diffArchives } from '../../src/diff/diff-archives.js';
import { tempDir } from '../helpers/temp.js';
import { sampleManifest, writeSampleArchive } from '../verify/sample-archive.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir('diff-listings-');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The sample archive with `change` applied to its manifest, in a folder of its own. */
async function archive(
  name: string,
  change: (manifest: ReturnType<typeof sampleManifest>) => void = () => undefined,
): Promise<string> {
  const manifest = sampleManifest();
  change(manifest);
  await mkdir(join(dir, name));
  return writeSampleArchive(join(dir, name), { manifest });
}

const filesOf = (manifest: ReturnType<typeof sampleManifest>, id: string) =>
  manifest.prototypes[id]?.revisions[String(manifest.prototypes[id]?.revision)]?.files ?? [];

describe('diff of manifests as listed', () => {
  it('sees the same listings in another order, or one listed twice, as unchanged', async () => {
    const a = await archive('a');
    const b = await archive('b', (manifest) => {
      const files = filesOf(manifest, '4711');
      files.reverse();
      files.push({ ...(files[0] as (typeof files)[number]) });
    });
    const diff = await diffArchives(a, b);
    expect(diff.changed).toEqual([]);
    expect(diff.unchanged).toBe(2);
  });

  it('names the one item whose sha256 changed, and only in its prototype', async () => {
    const a = await archive('a');
    const b = await archive('b', (manifest) => {
      const entry = filesOf(manifest, '4711').find((file) => file.path.endsWith('/layers/layer5.json'));
      if (!entry) throw new Error('sample changed');
      entry.sha256 = 'f'.repeat(64);
    });
    const diff = await diffArchives(a, b);
    expect(diff.unchanged).toBe(1);
    expect(diff.changed.map((change) => [change.id, change.changes.layers])).toEqual([
      ['4711', { added: [], removed: [], changed: ['layer5'] }],
    ]);
  });
});
