import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { exportAccount } from '../../src/export/export-account.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { keptCopies } from '../helpers/kept-files.js';
import { python } from '../helpers/tools.js';

const run = promisify(execFile);

/**
 * Element texts in several scripts, added to the sample account through the service's own write
 * API before the export (the sample data, which other tests depend on byte for byte, is left as is).
 */
export const ADDED = {
  greek: { type: 'text', text: 'Καλάθι αγορών', position: { x: 10, y: 10 }, dimensions: { width: 80, height: 20 } },
  cyrillic: {
    type: 'button',
    text: 'Оплатить Ёлку',
    position: { x: 10, y: 40 },
    dimensions: { width: 80, height: 20 },
  },
  cjk: {
    type: 'headline',
    text: 'お支払い方法を選択',
    position: { x: 10, y: 70 },
    dimensions: { width: 80, height: 20 },
  },
  coupon: {
    type: 'text',
    text: 'Gutschein-Code einlösen',
    placeholder: 'Café coupon',
    position: { x: 10, y: 100 },
    dimensions: { width: 80, height: 20 },
  },
  hostile: {
    type: 'text',
    text: 'alarm \u001b[31mred\u0007 \u202eevil\u202c \u009b1m and\u2028more',
    position: { x: 10, y: 130 },
    dimensions: { width: 80, height: 20 },
  },
  /** On the shared header layer, so on every page that shows it. */
  onLayer: { type: 'text', text: 'Ωmega menu', position: { x: 200, y: 10 }, dimensions: { width: 80, height: 20 } },
} as const;

/** Where the added elements go: the main sample prototype's start page and its header layer. */
export const PAGE = 'page0001';
export const LAYER = 'layer1';

/**
 * Exports the sample account with the added texts into `dir`/archive.zip, and writes the same
 * archive as an older export made it (no `search/` entries, none in the manifest) to
 * `dir`/old.zip, with Python's zipfile (not our writer).
 */
export async function searchArchives(dir: string): Promise<{ archive: string; old: string }> {
  // The same each time: a test worker makes them once and hands each caller copies of its own.
  const [archive, old] = await keptCopies('search-archives', makeSearchArchives, dir);
  return { archive: archive as string, old: old as string };
}

async function makeSearchArchives(dir: string): Promise<string[]> {
  const service = await startFakeService({ seed: 1 });
  try {
    const add = async (parent: string, body: object) => {
      const url = `${service.baseUrl}/rabbit/api/prototypes/3/${parent}/elements.json?api_key=${encodeURIComponent(service.keys.readWrite)}`;
      const answer = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (answer.status !== 201) throw new Error(`adding an element answered ${answer.status}`);
    };
    const { onLayer, ...onPage } = ADDED;
    for (const body of Object.values(onPage)) await add(`pages/${PAGE}`, body);
    await add(`layers/${LAYER}`, onLayer);
    const archive = join(dir, 'archive.zip');
    const result = await exportAccount({ out: archive, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
    if (!result.complete) throw new Error('the export was not complete');
    const old = join(dir, 'old.zip');
    await run(python(), ['-c', WITHOUT_INDEX, archive, old]);
    return ['archive.zip', 'old.zip'];
  } finally {
    await service.close();
  }
}

const WITHOUT_INDEX = `
import json, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED) as zout:
    for info in zin.infolist():
        if info.filename.startswith('search/'):
            continue
        data = zin.read(info)
        if info.filename == 'manifest.json':
            manifest = json.loads(data)
            manifest['files'] = [f for f in manifest['files'] if not f['path'].startswith('search/')]
            data = json.dumps(manifest).encode('utf-8')
        zout.writestr(info, data)
`;
