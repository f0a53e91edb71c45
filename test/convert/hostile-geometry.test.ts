import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { runCli } from '../helpers/cli.js';
import { exportWithElements } from './helpers.js';
import { requireTool, tool } from './tools.js';

const QPDF = requireTool('/usr/bin/qpdf', 'qpdf');
const PDFINFO = requireTool('/usr/bin/pdfinfo', 'poppler-utils');
const PDFTOTEXT = requireTool('/usr/bin/pdftotext', 'poppler-utils');

/**
 * Coordinates each finite but absurd: their sums overflow to Infinity, which no document can
 * hold, and a page grown to hold them would be larger than any PDF page. Each such element is
 * skipped and named in the report; the rest of the prototype, and the run, carry on.
 */
const HOSTILE = {
  overflow: {
    type: 'button',
    position: { x: 1e308, y: -1e308 },
    dimensions: { width: 1e308, height: 1e308 },
    text: 'Overflow Label',
  },
  negative: { type: 'text', position: { x: -1e7, y: 5 }, dimensions: { width: 50, height: 20 }, text: 'Far Label' },
  /** Within the coordinate bound, but the page would grow past 14,400 units to hold it. */
  wide: { type: 'text', position: { x: 14_000, y: 5 }, dimensions: { width: 900, height: 20 }, text: 'Wide Label' },
} as const;
/** Not a number: drawn at the defaults, with a note. */
const NAN_LIKE = {
  type: 'text',
  position: { x: 'NaN', y: '1e999' },
  dimensions: { width: 80, height: 20 },
  text: 'Nanlike Label',
};
const KEPT = { type: 'text', position: { x: 30, y: 40 }, dimensions: { width: 120, height: 20 }, text: 'Kept Label' };

let dir: string;
let archive: string;
const ids: Record<string, string> = {};

describe('elements with absurd coordinates are skipped, one by one, in every format', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-hostile-geometry-'));
    const named = Object.entries({ ...HOSTILE, nanLike: NAN_LIKE, kept: KEPT });
    const made = await exportWithElements(
      dir,
      named.map(([, element]) => element),
    );
    archive = made.archive;
    named.forEach(([key], index) => (ids[key] = made.ids[index] as string));
  }, 120_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each(['pdf', 'svg', 'drawio', 'excalidraw'])('%s: each hostile element skipped and named', async (to) => {
    const out = join(dir, to);
    const report = await convertArchive({ archive, out, to, prototypes: ['42'] });
    const prototype = report.prototypes[0]!;
    expect(prototype.file).not.toBeNull();
    expect(report.complete).toBe(false);
    const skipped = prototype.skipped.map((entry) => entry.what).join('\n');
    for (const key of Object.keys(HOSTILE)) expect(skipped).toMatch(new RegExp(`element ${ids[key]} (of|on) page`));
    expect(prototype.skipped).toHaveLength(Object.keys(HOSTILE).length);
    expect(prototype.notes.map((entry) => entry.what)).toContainEqual(
      expect.stringMatching(new RegExp(`^element ${ids.nanLike} of page `)),
    );
    const written = await documentText(join(out, prototype.file!), to);
    expect(written).toContain('Kept Label');
    expect(written).toContain('Nanlike Label');
    for (const label of ['Overflow Label', 'Far Label', 'Wide Label']) expect(written).not.toContain(label);
  });

  it('pdf: qpdf finds the binder sound and every page within 14,400 units', async () => {
    const report = await convertArchive({ archive, out: join(dir, 'pdf-check'), to: 'pdf', prototypes: ['42'] });
    const file = join(dir, 'pdf-check', report.prototypes[0]!.file!);
    await tool(QPDF, ['--check', file]);
    const info = await tool(PDFINFO, ['-f', '1', '-l', '1000', file]);
    const sizes = [...info.matchAll(/Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts/g)];
    expect(sizes.length).toBeGreaterThan(1);
    for (const [, width, height] of sizes) {
      expect(Number(width)).toBeLessThanOrEqual(14_400);
      expect(Number(height)).toBeLessThanOrEqual(14_400);
    }
  });

  it('the command exits 3 (incomplete), having written every document and the report', async () => {
    const out = join(dir, 'cli-svg');
    const run = await runCli(['convert', archive, '--to', 'svg', '--out', out], { register: 'all' });
    expect(run.code).toBe(3);
    expect(run.stdout + run.stderr).toContain(`element ${ids.overflow}`);
    const report = JSON.parse(await readFile(join(out, 'convert-report.json'), 'utf8')) as {
      prototypes: { file: string | null }[];
    };
    expect(report.prototypes.length).toBeGreaterThan(1);
    for (const prototype of report.prototypes) expect(prototype.file).not.toBeNull();
  });
});

/** What a reader finds in the document: pdftotext's text, or the files' text for the XML and JSON formats. */
async function documentText(path: string, to: string): Promise<string> {
  if (to === 'pdf') return tool(PDFTOTEXT, ['-enc', 'UTF-8', path, '-']);
  if (to === 'drawio') return readFile(path, 'utf8');
  const files = await readdir(path);
  return (await Promise.all(files.map((file) => readFile(join(path, file), 'utf8')))).join('\n');
}
