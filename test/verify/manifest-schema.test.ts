import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/manifest/types.js';
import { checkManifestShape } from '../../src/manifest/manifest-shape.js';
import { assertValidManifest, manifestSchemaErrors } from '../helpers/manifest-schema.js';
import { sampleManifest } from './sample-archive.js';

type Edit = (m: Manifest & Record<string, unknown>) => void;

const first = (m: Manifest) => {
  const entry = m.prototypes['4711']?.revisions['17']?.files[0];
  if (!entry) throw new Error('sample lost its first file');
  return entry as typeof entry & Record<string, unknown>;
};

/** Each edit breaks one rule; `runtime` says whether the hand-written check must catch it too. */
const BAD: Array<{ label: string; edit: Edit; runtime: boolean }> = [
  { label: 'no formatVersion', edit: (m) => delete (m as Partial<Manifest>).formatVersion, runtime: true },
  { label: 'formatVersion 2', edit: (m) => (m.formatVersion = 2 as 1), runtime: true },
  { label: 'files not an array', edit: (m) => (m.files = {} as never), runtime: true },
  { label: 'uppercase sha256', edit: (m) => (first(m).sha256 = first(m).sha256.toUpperCase()), runtime: true },
  { label: 'short sha256', edit: (m) => (first(m).sha256 = 'abc'), runtime: true },
  { label: 'negative size', edit: (m) => (first(m).size = -1), runtime: true },
  { label: 'fractional size', edit: (m) => (first(m).size = 1.5), runtime: true },
  {
    label: 'missing contentType',
    edit: (m) => delete (first(m) as Partial<Manifest['files'][0]>).contentType,
    runtime: true,
  },
  {
    label: 'prototype without revision',
    edit: (m) => delete (m.prototypes['12'] as Partial<Manifest['prototypes'][0]>).revision,
    runtime: true,
  },
  { label: 'error without message', edit: (m) => m.errors.push({ source: '/x' } as never), runtime: true },
  { label: 'non-numeric prototype key', edit: (m) => (m.prototypes['abc'] = m.prototypes['12']!), runtime: true },
  { label: 'unsafe path', edit: (m) => (first(m).path = '../escape.json'), runtime: false },
  { label: 'path with empty segment', edit: (m) => (first(m).path = 'prototypes//x.json'), runtime: false },
  {
    label: 'source with the query (key)',
    edit: (m) => (first(m).source = '/rabbit/api/prototypes.json?api_key=x'),
    runtime: false,
  },
  { label: 'a negative keyRedactions', edit: (m) => (first(m).keyRedactions = -1), runtime: true },
  { label: 'a fractional keyRedactions', edit: (m) => (first(m).keyRedactions = 0.5), runtime: true },
  { label: 'unknown top-level property', edit: (m) => (m.surprise = true), runtime: false },
  { label: 'unknown file entry property', edit: (m) => (first(m).extra = 1), runtime: false },
  { label: 'startedAt not ISO', edit: (m) => (m.startedAt = 'yesterday'), runtime: false },
];

describe('manifest schema', () => {
  it('accepts the sample manifest, milestones with extra fields included', () => {
    expect(() => assertValidManifest(sampleManifest())).not.toThrow();
    expect(checkManifestShape(sampleManifest())).toEqual([]);
  });

  it('accepts an entry that counts the keys replaced in its body', () => {
    const manifest = sampleManifest();
    first(manifest).keyRedactions = 2;
    expect(() => assertValidManifest(manifest)).not.toThrow();
    expect(checkManifestShape(manifest)).toEqual([]);
  });

  it('accepts a minimal manifest', () => {
    const minimal = {
      formatVersion: 1,
      tool: { name: 'rabbit-export', version: '0.1.0' },
      source: { baseUrl: 'http://127.0.0.1:1' },
      startedAt: '2024-01-01T00:00:00.000Z',
      finishedAt: '2024-01-01T00:00:01.000Z',
      complete: true,
      prototypes: {},
      files: [],
      errors: [],
    };
    expect(manifestSchemaErrors(minimal)).toEqual([]);
    expect(checkManifestShape(minimal)).toEqual([]);
  });

  it.each(BAD)('rejects a manifest with $label', ({ edit }) => {
    const manifest = sampleManifest() as Manifest & Record<string, unknown>;
    edit(manifest);
    expect(() => assertValidManifest(manifest)).toThrow(/does not match/);
  });

  it.each(BAD.filter(({ runtime }) => runtime))('the runtime check rejects a manifest with $label too', ({ edit }) => {
    const manifest = sampleManifest() as Manifest & Record<string, unknown>;
    edit(manifest);
    expect(checkManifestShape(manifest)).not.toEqual([]);
  });
});
