import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { ZipSource } from '../helpers/write-zip.js';
import { writeZip } from '../helpers/write-zip.js';
import type { FileEntry, Manifest, ManifestError } from '../../src/manifest/types.js';

/** A small but realistic export: two prototypes, pages with PNGs, layers, elements, discussions. */
export interface SampleFile {
  path: string;
  source: string;
  body: Buffer;
  contentType: string;
}

const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(2048)]);
const json = (value: unknown) => Buffer.from(JSON.stringify(value));

export function sampleFiles(): {
  top: SampleFile[];
  byPrototype: Record<string, { revision: number; files: SampleFile[] }>;
} {
  const api = '/rabbit/api/prototypes';
  const file = (path: string, source: string, body: Buffer, contentType = 'application/json'): SampleFile => ({
    path,
    source,
    body,
    contentType,
  });
  const p = 'prototypes/4711/r17';
  return {
    top: [file('prototypes.json', '/rabbit/api/prototypes.json', json([4711, 12]))],
    byPrototype: {
      '4711': {
        revision: 17,
        files: [
          file(`${p}/prototype.json`, `${api}/4711.json`, json({ id: 4711, prototypeData: { name: 'Shop 🛒' } })),
          file(`${p}/pages.json`, `${api}/4711/pages.json`, json(['page0001', 'page0002'])),
          file(`${p}/pages/page0001.json`, `${api}/4711/pages/page0001.json`, json({ id: 'page0001', name: 'Home' })),
          file(`${p}/pages/page0001.png`, `${api}/4711/pages/page0001.png`, PNG, 'image/png'),
          file(
            `${p}/pages/page0001.html`,
            `${api}/4711/pages/page0001.html`,
            Buffer.from('<html/>'),
            'application/xhtml+xml',
          ),
          file(`${p}/pages/page0001/elements.json`, `${api}/4711/pages/page0001/elements.json`, json(['element9'])),
          file(
            `${p}/pages/page0001/elements/element9.json`,
            `${api}/4711/pages/page0001/elements/element9.json`,
            json({ type: 'button' }),
          ),
          file(`${p}/pages/page0002.json`, `${api}/4711/pages/page0002.json`, json({ id: 'page0002', name: 'Cart' })),
          file(`${p}/layers.json`, `${api}/4711/layers.json`, json(['layer5'])),
          file(`${p}/layers/layer5.json`, `${api}/4711/layers/layer5.json`, json({ id: 'layer5', name: 'Header' })),
          file(
            `${p}/layers/layer5/elements/element10.json`,
            `${api}/4711/layers/layer5/elements/element10.json`,
            json({ type: 'logo' }),
          ),
          file(
            `${p}/layers/layer5/elements/element11.json`,
            `${api}/4711/layers/layer5/elements/element11.json`,
            json({ type: 'menu' }),
          ),
          file(`${p}/discussions.json`, `${api}/4711/discussions.json`, json([88])),
          file(`${p}/discussions/88.json`, `${api}/4711/discussions/88.json`, json({ id: 88, title: 'Colour?' })),
        ],
      },
      '12': {
        revision: 3,
        files: [
          file('prototypes/12/r3/prototype.json', `${api}/12.json`, json({ id: 12 })),
          file('prototypes/12/r3/pages.json', `${api}/12/pages.json`, json(['page1'])),
          file('prototypes/12/r3/pages/page1.json', `${api}/12/pages/page1.json`, json({ id: 'page1' })),
        ],
      },
    },
  };
}

function entryOf(file: SampleFile): FileEntry {
  return {
    path: file.path,
    source: file.source,
    sha256: createHash('sha256').update(file.body).digest('hex'),
    size: file.body.length,
    contentType: file.contentType,
    lastModified: 'Wed, 31 May 2023 10:00:00 GMT',
  };
}

export function sampleManifest(errors: ManifestError[] = []): Manifest {
  const { top, byPrototype } = sampleFiles();
  const prototypes: Manifest['prototypes'] = {};
  for (const [id, { revision, files }] of Object.entries(byPrototype)) {
    prototypes[id] = {
      name: id === '4711' ? 'Shop 🛒\nnew line' : null,
      lastModification: 1685527200000,
      lastUser: 'ada',
      revision,
      complete: !errors.some((e) => e.source.startsWith(`/rabbit/api/prototypes/${id}`)),
      origin: { mode: 'fetched' },
      revisions: {
        [String(revision)]: {
          milestone: {
            revision,
            created: '1685527200000',
            name: 'autosaved',
            user: { id: 0, name: 'System' },
            extra: true,
          },
          files: files.map(entryOf),
        },
      },
    };
  }
  return {
    formatVersion: 1,
    tool: { name: 'rabbit-export', version: '0.1.0' },
    source: { baseUrl: 'https://rabbit.example' },
    startedAt: '2023-05-31T10:00:00.000Z',
    finishedAt: '2023-05-31T10:05:00.000Z',
    complete: errors.length === 0,
    prototypes,
    files: top.map(entryOf),
    errors,
    stats: { requests: 20, retries: 1, bytes: 4096, files: 18 },
  };
}

export interface SampleOptions {
  manifest?: Manifest | string | null;
  /** Entry paths to leave out of the zip although the manifest lists them. */
  omit?: string[];
  extra?: ZipSource[];
}

/** Writes the sample archive into `dir` and returns its path. */
export async function writeSampleArchive(dir: string, options: SampleOptions = {}): Promise<string> {
  const { top, byPrototype } = sampleFiles();
  const files = [...top, ...Object.values(byPrototype).flatMap((p) => p.files)];
  const manifest = options.manifest === undefined ? sampleManifest() : options.manifest;
  const sources: ZipSource[] = [];
  if (manifest !== null) {
    const data = typeof manifest === 'string' ? manifest : JSON.stringify(manifest, null, 2);
    sources.push({ name: 'manifest.json', data, store: false });
  }
  for (const file of files) {
    if (options.omit?.includes(file.path)) continue;
    sources.push({ name: file.path, data: file.body, store: file.contentType === 'image/png' });
  }
  sources.push(...(options.extra ?? []));
  const path = join(dir, 'export.zip');
  await writeZip(sources, path);
  return path;
}
