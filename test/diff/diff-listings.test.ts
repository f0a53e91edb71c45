import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { diffArchives, type ArchiveDiff } from '../../src/diff/diff-archives.js';
import { registerDiff } from '../../src/cli/commands/diff.js';
import { runCli } from '../helpers/cli.js';
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

  it('does not call a prototype changed for its generated views alone, which all share one source', async () => {
    const view = (sha256: string) => ({
      path: 'prototypes/4711/r17/pages/page0001.view.html',
      source: 'generated',
      sha256,
      size: 10,
      contentType: 'text/html; charset=utf-8',
      lastModified: null,
    });
    const a = await archive('a', (manifest) => void filesOf(manifest, '4711').push(view('a'.repeat(64))));
    const b = await archive('b', (manifest) => void filesOf(manifest, '4711').push(view('b'.repeat(64))));
    const diff = await diffArchives(a, b);
    expect(diff.changed).toEqual([]);
    expect(diff.unchanged).toBe(2);
  });

  // The same names in both, one file's bytes different: the change must say which kind of file.
  it.each([
    ['/prototype.json', 'metadata', 'prototype'],
    ['/pages.json', 'lists', 'pages.json'],
    ['/pages/page0001/elements.json', 'lists', 'pages/page0001/elements.json'],
    ['/pages/page0001/elements/element9.json', 'elements', 'page0001/element9'],
    ['/pages/page0001.png', 'renderings', 'page0001.png'],
  ])('a file changed in its bytes alone (%s) is named with its kind and count', async (suffix, kind, name) => {
    const a = await archive('a');
    const b = await archive('b', (manifest) => {
      const entry = filesOf(manifest, '4711').find((file) => file.path.endsWith(suffix));
      if (!entry) throw new Error('sample changed');
      entry.sha256 = 'e'.repeat(64);
    });
    const diff = await diffArchives(a, b);
    expect(diff.changed.map((change) => [change.id, change.counts])).toEqual([
      ['4711', { [kind]: { added: 0, removed: 0, changed: 1 } }],
    ]);
    expect(diff.changed[0]?.changes[kind as keyof ArchiveDiff['changed'][number]['changes']].changed).toEqual([name]);

    const text = await runCli(['diff', a, b], { register: registerDiff });
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n');
    const header = lines.findIndex((line) => line.startsWith('~ prototype 4711 '));
    expect(lines[header + 1]).toBe(`    ${kind}: 1 changed`);
    expect(lines.slice(header + 2).join('\n')).toContain(`~${name}`);
    const json = await runCli(['diff', a, b, '--json'], { register: registerDiff });
    const parsed = JSON.parse(json.stdout) as ArchiveDiff;
    expect(parsed.changed[0]?.counts).toEqual({ [kind]: { added: 0, removed: 0, changed: 1 } });
  });
});
