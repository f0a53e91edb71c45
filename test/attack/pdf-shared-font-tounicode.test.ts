import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PagePlan, PrototypeHead } from '../../src/convert/page-walk.js';
import { pdfBinder } from '../../src/convert/pdf-binder.js';
import { NO_FONTS } from '../../src/convert/pdf/system-fonts.js';
import type { PageMeta } from '../../src/convert/prototype-data.js';
import { XmlText } from '../../src/convert/xml-text.js';
import { requireTool, tool } from '../convert/tools.js';

/**
 * Since each font face is parsed once per process, every binder of a `convert --to pdf` run takes
 * its glyphs from one fontkit Font, which keeps each glyph it made, with the characters it was
 * made for, for the rest of the run. A glyph first made while an earlier binder's subset was
 * written (the component of a composite glyph: DejaVu Sans draws Greek Κ with Latin K) was made
 * for no character, and pdfkit maps every later binder's uses of it to no character in their
 * ToUnicode maps. A line with right-to-left text is read back from those maps (pdf-text.ts), so a
 * later binder's "Kontakt שלום" read back without its K; converted alone, or before the Greek
 * binder, it read back whole. What one binder holds must not change what another reads back.
 */
const PDFTOTEXT = requireTool('/usr/bin/pdftotext', 'poppler-utils');

const RIGHT_TO_LEFT = 'Kontakt שלום';

let dir: string;

async function binder(name: string, file: string): Promise<string> {
  const page: PageMeta = { id: 'page1', name: 'Page', layerIds: [] };
  const head: PrototypeHead = { id: '5', name, revision: 1, lastModification: null, lastUser: null, milestones: [] };
  const plan: PagePlan = { pages: [page], pageIds: new Set(['page1']), discussions: new Map() };
  // The bundled font alone, as in the other binder tests: the machine's fonts play no part.
  const { bytes } = await pdfBinder(head, plan, (async function* () {})(), new XmlText(), { fonts: NO_FONTS });
  const path = join(dir, file);
  await writeFile(path, bytes);
  return path;
}

/** The title as pdftotext reads it, without the marks it puts around a right-to-left run. */
const firstLine = async (file: string): Promise<string> =>
  ((await tool(PDFTOTEXT, ['-enc', 'UTF-8', '-f', '1', '-l', '1', file, '-'])).split('\n')[0] ?? '').replace(
    /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    '',
  );

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rabbit-pdf-shared-font-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a binder reads back the same whatever binders the run made before it', () => {
  it('a right-to-left title with a K, after a binder titled in Greek', async () => {
    // The Greek title is drawn in DejaVu Sans Bold, as the next binder's title is; its Κ (and Α)
    // are composites of the Latin letters, which no other text of that binder draws in bold.
    await binder('Καλάθι ΑΚ', 'greek.pdf');
    const after = await binder(RIGHT_TO_LEFT, 'after.pdf');
    expect(await firstLine(after)).toBe(RIGHT_TO_LEFT);
  });
});
