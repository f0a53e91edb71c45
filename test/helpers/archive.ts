import { openZip } from '../../src/zip/zip-reader.js';
import type { Manifest } from '../../src/manifest/types.js';

/** Every entry of a zip, decompressed, with its compression method. For small test archives. */
export async function readArchive(path: string): Promise<{
  manifest: Manifest;
  entries: Map<string, { data: Buffer; method: number }>;
}> {
  const zip = await openZip(path);
  try {
    const entries = new Map<string, { data: Buffer; method: number }>();
    for (const [name, info] of zip.entries) {
      entries.set(name, { data: await zip.readEntry(name), method: info.compressionMethod });
    }
    const manifestEntry = entries.get('manifest.json');
    if (!manifestEntry) throw new Error('no manifest.json');
    return { manifest: JSON.parse(manifestEntry.data.toString('utf8')) as Manifest, entries };
  } finally {
    zip.close();
  }
}

/** An archive's manifest.json, parsed whole. For small test archives. */
export async function manifestOf(path: string): Promise<Manifest> {
  const zip = await openZip(path);
  try {
    return JSON.parse((await zip.readEntry('manifest.json')).toString('utf8')) as Manifest;
  } finally {
    zip.close();
  }
}
