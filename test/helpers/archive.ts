import yauzl from 'yauzl';
import type { Manifest } from '../../src/manifest/types.js';

// Archives are read back with yauzl, a reader we did not write: a check made through our own zip
// reader would pass on any archive that reader and the writer agree on, however wrong.
const STRICT: yauzl.Options = { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true };

async function entryData(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Every entry of a zip, decompressed, with its compression method. For small test archives. */
export async function readArchive(path: string): Promise<{
  manifest: Manifest;
  entries: Map<string, { data: Buffer; method: number }>;
}> {
  const zip = await yauzl.openPromise(path, STRICT);
  try {
    const entries = new Map<string, { data: Buffer; method: number }>();
    for await (const entry of zip.eachEntry()) {
      if (entries.has(entry.fileName)) throw new Error(`${path} holds ${entry.fileName} twice`);
      entries.set(entry.fileName, { data: await entryData(zip, entry), method: entry.compressionMethod });
    }
    const manifestEntry = entries.get('manifest.json');
    if (!manifestEntry) throw new Error(`${path} holds no manifest.json`);
    return { manifest: JSON.parse(manifestEntry.data.toString('utf8')) as Manifest, entries };
  } finally {
    zip.close();
  }
}

/** An archive's manifest.json, parsed whole; no other entry is decompressed. */
export async function manifestOf(path: string): Promise<Manifest> {
  const zip = await yauzl.openPromise(path, STRICT);
  try {
    let manifest: Buffer | undefined;
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName !== 'manifest.json') continue;
      if (manifest) throw new Error(`${path} holds manifest.json twice`);
      manifest = await entryData(zip, entry);
    }
    if (!manifest) throw new Error(`${path} holds no manifest.json`);
    return JSON.parse(manifest.toString('utf8')) as Manifest;
  } finally {
    zip.close();
  }
}
