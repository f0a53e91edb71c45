import { describe, expect, it } from 'vitest';
import { checkManifestShape } from '../../src/manifest/manifest-shape.js';
import {
  ManifestReadError,
  opensAsManifest,
  streamManifest,
  type FileOwner,
} from '../../src/manifest/manifest-stream.js';
import type { FileEntry, Manifest, PrototypeRecord } from '../../src/manifest/types.js';
import { sampleManifest } from '../verify/sample-archive.js';

/** The manifest's bytes cut every `size` bytes, so tokens, strings and UTF-8 sequences split. */
async function* chunks(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

function richManifest(): Manifest {
  const manifest = sampleManifest([{ source: '/rabbit/api/prototypes/12.json', status: 503, message: 'HTTP 503' }]);
  const record = manifest.prototypes['4711'] as PrototypeRecord;
  record.name = 'Überblick — 日本語 ✓';
  manifest.foreignReferences = [{ url: 'https://cdn.example/x.css', referencedBy: ['a.html'] }];
  return manifest;
}

async function failure(text: string): Promise<ManifestReadError> {
  const error = await streamManifest(chunks(text, 5), {}).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ManifestReadError)) throw new Error(`expected a ManifestReadError, got ${String(error)}`);
  return error;
}

describe('streamManifest', () => {
  it.each([1, 3, 7, 64, 1 << 16])(
    'reads a manifest cut into %i-byte chunks exactly as JSON.parse does',
    async (size) => {
      const manifest = richManifest();
      const text = JSON.stringify(manifest, null, size === 7 ? 2 : undefined);
      const prototypes: Record<string, PrototypeRecord> = {};
      const files: Array<[string, FileOwner]> = [];
      const top: FileEntry[] = [];
      const errors: unknown[] = [];
      const references: unknown[] = [];
      const head = await streamManifest(
        chunks(text, size),
        {
          file: (entry, owner) => {
            files.push([entry.path, owner]);
            if (owner === null) top.push(entry);
          },
          prototype: (id, record) => {
            prototypes[id] = record;
          },
          error: (error) => errors.push(error),
          foreignReference: (reference) => references.push(reference),
        },
        { keepPrototypeFiles: true },
      );
      const {
        prototypes: expected,
        files: expectedTop,
        errors: expectedErrors,
        foreignReferences,
        ...expectedHead
      } = manifest;
      expect(head).toEqual(expectedHead);
      expect(prototypes).toEqual(expected);
      expect(top).toEqual(expectedTop);
      expect(errors).toEqual(expectedErrors);
      expect(references).toEqual(foreignReferences);
      const listed = Object.entries(expected).flatMap(([id, record]) =>
        Object.entries(record.revisions).flatMap(([revision, { files: list }]) =>
          list.map((f): [string, FileOwner] => [f.path, { prototype: id, revision }]),
        ),
      );
      expect(files).toEqual([...listed, ...expectedTop.map((f): [string, FileOwner] => [f.path, null])]);
    },
  );

  it('hands out prototype records without their files unless asked to keep them', async () => {
    const records: PrototypeRecord[] = [];
    let count = 0;
    await streamManifest(chunks(JSON.stringify(sampleManifest()), 100), {
      prototype: (_id, record) => void records.push(record),
      file: () => void count++,
    });
    expect(count).toBeGreaterThan(0);
    for (const record of records)
      for (const revision of Object.values(record.revisions)) expect(revision.files).toEqual([]);
  });

  it('waits for an asynchronous prototype handler before reading on', async () => {
    const order: string[] = [];
    await streamManifest(chunks(JSON.stringify(sampleManifest()), 1 << 16), {
      prototype: async (id) => {
        await new Promise((resolve) => setImmediate(resolve));
        order.push(`done ${id}`);
      },
      error: () => order.push('error'),
      file: (_entry, owner) => {
        if (owner === null) order.push('top file');
      },
    });
    expect(order.indexOf('top file')).toBeGreaterThan(order.lastIndexOf(order.find((o) => o.startsWith('done')) ?? ''));
  });

  it.each([
    { label: 'cut short', text: JSON.stringify(sampleManifest()).slice(0, -40) },
    { label: 'cut before its last brace', text: JSON.stringify(sampleManifest()).slice(0, -1) },
    { label: 'garbage inside', text: JSON.stringify(sampleManifest()).replace('"files":[', '"files":[}') },
    { label: 'empty', text: '' },
    { label: 'two values', text: `${JSON.stringify(sampleManifest())} {}` },
  ])('fails a manifest that is $label as not JSON', async ({ text }) => {
    expect((await failure(text)).kind).toBe('json');
  });

  const BAD: Array<{ label: string; edit: (m: Manifest & Record<string, unknown>) => void }> = [
    { label: 'an array at the top', edit: () => undefined },
    { label: 'no files', edit: (m) => delete (m as Partial<Manifest>).files },
    { label: 'files as an object', edit: (m) => ((m as Record<string, unknown>).files = {}) },
    { label: 'a newer format', edit: (m) => ((m as Record<string, unknown>).formatVersion = 2) },
    {
      label: 'a bad sha256 deep inside',
      edit: (m) =>
        ((Object.values(Object.values(m.prototypes)[0]?.revisions ?? {})[0]?.files[0] as FileEntry).sha256 = 'ABC'),
    },
    { label: 'a prototype that is a string', edit: (m) => ((m.prototypes as Record<string, unknown>)['99'] = 'nope') },
    { label: 'a prototype keyed by a name', edit: (m) => (m.prototypes.abc = m.prototypes['4711'] as PrototypeRecord) },
    {
      label: 'revisions as an array',
      edit: (m) => ((m.prototypes['4711'] as unknown as Record<string, unknown>).revisions = []),
    },
    { label: 'an error without a message', edit: (m) => m.errors.push({ source: 'x' } as never) },
    { label: 'stats without counts', edit: (m) => (m.stats = { requests: -1 } as never) },
  ];

  it.each(BAD)(
    'fails a manifest with $label as the wrong shape, naming an issue checkManifestShape names',
    async ({ label, edit }) => {
      const manifest = sampleManifest() as Manifest & Record<string, unknown>;
      edit(manifest);
      const value: unknown = label === 'an array at the top' ? [manifest] : manifest;
      const error = await failure(JSON.stringify(value));
      expect(error.kind).toBe('shape');
      expect(checkManifestShape(value)).toContain(error.message);
    },
  );
});

describe('a field named __proto__', () => {
  // Assigned to an object, `__proto__` replaces its prototype: a manifest wrapped in one read as a
  // manifest with nothing of its own, and ls showed "no prototypes" where verify found 369 problems.
  it.each([
    { label: 'wrapping the whole manifest', text: (m: string) => `{"__proto__":${m}}` },
    { label: 'in the head', text: (m: string) => m.replace('{', '{"__proto__":{"complete":true},') },
    { label: 'in a file entry', text: (m: string) => m.replace('"files":[{', '"files":[{"__proto__":{},') },
    {
      label: 'as a prototype record',
      text: (m: string) => m.replace('"prototypes":{', '"prototypes":{"__proto__":{},'),
    },
  ])('is refused $label, where the streamed read would have let it replace a prototype', async ({ text }) => {
    const error = await failure(text(JSON.stringify(sampleManifest())));
    expect({ kind: error.kind, message: error.message }).toEqual({
      kind: 'shape',
      message: 'manifest.json has a field named __proto__, which no manifest has',
    });
  });
});

describe('opensAsManifest', () => {
  const HEAD_CAP = 64 * 1024;
  const opens = (text: string, size = 5) => opensAsManifest(chunks(text, size), HEAD_CAP);

  it('says yes from the head of a manifest as the export writes it, and reads no further', async () => {
    const text = JSON.stringify(sampleManifest(), null, 2);
    let read = 0;
    // The head, then bytes that would fail any read that went on to them.
    async function* headThenNever(): AsyncGenerator<Buffer> {
      for await (const chunk of chunks(text.slice(0, text.indexOf('"prototypes"')), 7)) {
        read += chunk.length;
        yield chunk;
      }
      throw new Error('read past the head');
    }
    expect(await opensAsManifest(headThenNever(), HEAD_CAP)).toBe(true);
    expect(read).toBeLessThanOrEqual(text.indexOf('"prototypes"'));
    expect(await opens(text, 1 << 16)).toBe(true);
  });

  it.each([
    ['not JSON', 'this is not JSON'],
    ['an array', '[{"formatVersion": 1}]'],
    ['an object of no format', '{"hello": "world", "formatVersion": 1}'],
    ['a newer format', JSON.stringify({ ...sampleManifest(), formatVersion: 2 })],
    ['a tool that is a string', JSON.stringify({ ...sampleManifest(), tool: 'rabbit-export' })],
    ['its fields inherited through __proto__', `{"__proto__": ${JSON.stringify(sampleManifest())}}`],
    ['only its head, cut short', JSON.stringify(sampleManifest()).slice(0, 60)],
  ])('says no for %s', async (_label, text) => {
    expect(await opens(text)).toBe(false);
  });

  it('says no when the head comes after more than it reads, though the whole read takes it', async () => {
    const manifest = sampleManifest();
    const { prototypes, files, errors, ...head } = manifest;
    const bare = { name: 'x', lastModification: null, revision: 1, complete: true, revisions: {} };
    const padded = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [String(10_000 + i), bare]));
    const text = JSON.stringify({ prototypes: { ...prototypes, ...padded }, files, errors, ...head });
    expect(text.length).toBeGreaterThan(HEAD_CAP);
    expect(await opens(text, 4096)).toBe(false);
    await expect(streamManifest(chunks(text, 4096), {})).resolves.toMatchObject({ formatVersion: 1 });
  });
});
