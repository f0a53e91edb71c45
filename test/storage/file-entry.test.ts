import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { entryLine } from '../../src/manifest/archive-model.js';
import type { StoredFile } from '../../src/storage/stored-file.js';
import { FILE_ENTRY_MEMBERS } from '../../src/storage/file-entry.js';
import { checkFile, checkManifestShape } from '../../src/manifest/manifest-shape.js';
import { ManifestReadError, streamManifest } from '../../src/manifest/manifest-stream.js';
import { prettyEntry } from '../../src/manifest/write-manifest.js';
import type { FileEntry } from '../../src/manifest/types.js';
import { manifestSchemaErrors } from '../helpers/manifest-schema.js';

const SHA = 'ab'.repeat(32);
const base: FileEntry = {
  path: 'prototypes/12/r3/pages/page0001.json',
  source: '/rabbit/api/prototypes/12/pages/page0001.json',
  sha256: SHA,
  size: 42,
  contentType: 'application/json',
  lastModified: 'Wed, 21 Oct 2015 07:28:00 GMT',
};

/** Entries every part must agree on, each with values a writer or a reader could get wrong. */
const AWKWARD: Array<[string, FileEntry]> = [
  ['plain', base],
  [
    'unicode',
    { ...base, source: '/rabbit/api/prototypes/12/pages/Überblick—日本語✓🛒.json', contentType: 'text/plain; ✓' },
  ],
  ['a lone surrogate', { ...base, contentType: 'x/\ud800y\udfff' }],
  ['the biggest safe size', { ...base, size: Number.MAX_SAFE_INTEGER }],
  ['size 0', { ...base, size: 0 }],
  ['an empty lastModified', { ...base, lastModified: '' }],
  ['no lastModified', { ...base, lastModified: null }],
  ['generatedFrom', { ...base, source: 'generated', generatedFrom: 'prototypes/12/r3/pages/page0001.html' }],
  ['keyRedactions', { ...base, keyRedactions: 3 }],
  // A name the table does not build holds no API resource: an asset's source outside the API, as long.
  [
    'a long path',
    {
      ...base,
      path: `prototypes/12/r3/${'a.b-c_d/'.repeat(40)}x.json`,
      source: `/static/${'a.b-c_d/'.repeat(40)}x.json`,
    },
  ],
];

/** JSON can carry any text, and the writer writes it; a reader refuses it where a path or a URL goes. */
const CONTROL: FileEntry = { ...base, source: '/a\u0000\u0001\u001f\t\n\r"quoted"\\back\\\u007f\u2028\u2029b' };

/** Entries every check must refuse, for one member each. */
const WRONG: Array<[string, Record<string, unknown>]> = [
  ['an empty path', { ...base, path: '' }],
  ['an empty source', { ...base, source: '' }],
  ['an uppercase sha256', { ...base, sha256: SHA.toUpperCase() }],
  ['a negative size', { ...base, size: -1 }],
  ['a fractional size', { ...base, size: 1.5 }],
  ['a size as text', { ...base, size: '42' }],
  ['a numeric lastModified', { ...base, lastModified: 5 }],
  ['no contentType', { ...base, contentType: undefined }],
  ['an empty generatedFrom', { ...base, generatedFrom: '' }],
  ['a negative keyRedactions', { ...base, keyRedactions: -1 }],
  ['keyRedactions as text', { ...base, keyRedactions: '3' }],
];

const schema = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../schema/manifest.schema.json', import.meta.url)), 'utf8'),
) as { $defs: { fileEntry: { required: string[]; properties: Record<string, unknown> } } };

/** A whole manifest listing one entry at the top level. */
function manifestWith(entry: unknown): Record<string, unknown> {
  return {
    formatVersion: 1,
    tool: { name: 'rabbit-export', version: '0.1.0' },
    source: { baseUrl: 'http://127.0.0.1:1' },
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:01.000Z',
    complete: true,
    prototypes: {},
    files: [entry],
    errors: [],
  };
}

async function* chunks(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

/** The manifest's bytes as the writer makes them: the entry's filed line pretty-printed into its place. */
function written(entry: FileEntry): Buffer {
  const line = Buffer.from(entryLine({ ...entry, file: '', offset: 12345 } as StoredFile), 'utf8');
  const out = Buffer.alloc(line.length * 10 + 100);
  const pretty = out.subarray(0, prettyEntry(line, 4, out, 0));
  const [before, after] = JSON.stringify(manifestWith('@ENTRY@'), null, 2).split('"@ENTRY@"') as [string, string];
  return Buffer.concat([Buffer.from(before), pretty, Buffer.from(after)]);
}

async function streamed(bytes: Buffer): Promise<FileEntry[]> {
  const seen: FileEntry[] = [];
  await streamManifest(chunks(bytes, 7), { file: (entry) => void seen.push(entry) });
  return seen;
}

describe('a manifest file entry', () => {
  it('has the same members in the definition, in FileEntry (by the compiler) and in the JSON Schema', () => {
    const { fileEntry } = schema.$defs;
    expect(Object.keys(fileEntry.properties).sort()).toEqual(FILE_ENTRY_MEMBERS.map((m) => m.name).sort());
    expect([...fileEntry.required].sort()).toEqual(
      FILE_ENTRY_MEMBERS.filter((m) => m.required)
        .map((m) => m.name)
        .sort(),
    );
    expect(FILE_ENTRY_MEMBERS[0].name).toBe('path');
  });

  it.each(AWKWARD)(
    'with %s is written as JSON.stringify writes it, read back whole and accepted by every check',
    async (_, entry) => {
      const bytes = written(entry);
      const text = bytes.toString('utf8');
      // Byte for byte the pretty-printed JSON of the whole, offset left out.
      expect(text).toBe(JSON.stringify(manifestWith(entry), null, 2));
      const parsed = JSON.parse(text) as { files: FileEntry[] };
      expect(parsed.files).toEqual([entry]);
      expect(await streamed(bytes)).toEqual([entry]);
      const issues: string[] = [];
      checkFile('files[0]', parsed.files[0], (where, what) => issues.push(`${where} ${what}`));
      expect(issues).toEqual([]);
      expect(checkManifestShape(parsed)).toEqual([]);
      expect(manifestSchemaErrors(parsed)).toEqual([]);
    },
  );

  it('with control characters is written as JSON.stringify writes it, and refused by the shape check and the stream reader', async () => {
    const bytes = written(CONTROL);
    expect(bytes.toString('utf8')).toBe(JSON.stringify(manifestWith(CONTROL), null, 2));
    expect((JSON.parse(bytes.toString('utf8')) as { files: FileEntry[] }).files).toEqual([CONTROL]);
    expect(checkManifestShape(JSON.parse(bytes.toString('utf8')))).toEqual([
      'files[0].source holds a control character (U+0000)',
    ]);
    const error = await streamed(bytes).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ManifestReadError);
    expect((error as ManifestReadError).message).toBe('files[0].source holds a control character (U+0000)');
  });

  it.each(WRONG)('with %s is refused by the shape check, the stream reader and the JSON Schema', async (_, entry) => {
    const manifest = manifestWith(entry);
    expect(checkManifestShape(manifest)).toHaveLength(1);
    expect(manifestSchemaErrors(manifest)).not.toEqual([]);
    const error = await streamed(Buffer.from(JSON.stringify(manifest, null, 2))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ManifestReadError);
    expect((error as ManifestReadError).kind).toBe('shape');
  });
});
