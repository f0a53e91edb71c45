import { createHash } from 'node:crypto';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Element } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareIds } from '../../src/api/ids.js';
import { convertArchive } from '../../src/convert/convert-archive.js';
import { isRabbitError } from '../../src/core/errors.js';
import { tempDir } from '../helpers/temp.js';
import { dataOffsetOf, flipByte, renameInPlace } from '../zip/zip-bytes.js';
import { DROPPED_CHARACTERS, EXTRA_ELEMENTS, EXTRA_PAGE, exportSample, withoutNonXml } from './helpers.js';
import {
  cellOf,
  children,
  expectedFrom,
  geometryOf,
  pageSizeOf,
  parseDrawio,
  type ExpectedPrototype,
} from './expected.js';

let archive: string;
let expected: ExpectedPrototype[];

let dir: string | undefined;

beforeAll(async () => {
  // Not tempDir(): that one is emptied after each test, and every test reads this archive.
  dir = await mkdtemp(join(tmpdir(), 'rabbit-convert-'));
  archive = await exportSample(dir);
  expected = await expectedFrom(archive);
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The diagrams of one converted prototype, parsed strictly. */
async function diagramsOf(out: string, file: string): Promise<Element[]> {
  const doc = parseDrawio(await readFile(join(out, file), 'utf8'));
  expect(doc.documentElement?.tagName).toBe('mxfile');
  return children(doc.documentElement as Element, 'diagram');
}

function rootOf(diagram: Element): Element {
  const model = children(diagram, 'mxGraphModel')[0] as Element;
  return children(model, 'root')[0] as Element;
}

describe('convert --to drawio', () => {
  it('writes one document per prototype with every element once per diagram that shows it, exactly', async () => {
    const out = await tempDir();
    const report = await convertArchive({ archive, out });
    expect(report.complete).toBe(true);
    expect(report.prototypes.map((p) => p.id)).toEqual(['3', '17', '42', '1001', '1002']);
    expect((await readdir(out)).sort()).toEqual(
      [
        '1001-dashboard-prototype-1001.drawio',
        '1002-help-prototype-1002.drawio',
        '17-shop-i-beta-i-friends-日本語.drawio',
        '3-foo-type.drawio',
        '42-alt-api-prototyp.drawio',
        'convert-report.json',
      ].sort(),
    );
    expect(JSON.parse(await readFile(join(out, 'convert-report.json'), 'utf8'))).toEqual(report);

    for (const proto of expected) {
      const result = report.prototypes.find((p) => p.id === proto.id)!;
      const diagrams = await diagramsOf(out, result.file!);
      // A diagram per page, in pages.json order, named exactly by the page (markup and emoji too).
      expect(diagrams.map((d) => d.getAttribute('name'))).toEqual(proto.pages.map((p) => p.name));
      expect(diagrams.map((d) => d.getAttribute('id'))).toEqual(proto.pages.map((p) => p.id));
      let shapes = 0;
      let links = 0;
      let labelled = 0;
      for (const [index, page] of proto.pages.entries()) {
        const diagram = diagrams[index] as Element;
        const model = children(diagram, 'mxGraphModel')[0] as Element;
        const size = pageSizeOf(page);
        expect([model.getAttribute('pageWidth'), model.getAttribute('pageHeight')]).toEqual([
          String(size.width),
          String(size.height),
        ]);
        const cells = children(rootOf(diagram));
        const layers = cells.filter((c) => c.getAttribute('parent') === '0');
        // Bottom to top: rendering, the layers the page shows, its own elements, hidden discussions.
        const names = [
          'Rendering',
          ...page.layers.map((l) => l.name),
          page.name,
          ...(page.discussions.length > 0 ? ['Discussions'] : []),
        ];
        expect(layers.map((l) => l.getAttribute('value'))).toEqual(names);
        expect(layers[0]?.getAttribute('style')).toContain('locked=1');
        // Only the discussions' layer starts hidden.
        expect(layers.filter((l) => l.getAttribute('visible') === '0').map((l) => l.getAttribute('value'))).toEqual(
          page.discussions.length > 0 ? ['Discussions'] : [],
        );

        const rendering = cells.filter((c) => cellOf(c).getAttribute('parent') === layers[0]?.getAttribute('id'));
        expect(rendering).toHaveLength(1);
        expect(cellOf(rendering[0] as Element).getAttribute('style')).toContain(
          `image=data:image/png,${page.png.toString('base64')};`,
        );

        const groups = [
          ...page.layers.map((l) => ({ layer: l.name, elements: l.elements })),
          { layer: page.name, elements: page.elements },
        ];
        const objects = cells.filter((c) => c.tagName === 'object' && c.getAttribute('rabbitId') !== null);
        expect(objects).toHaveLength(groups.reduce((sum, g) => sum + g.elements.length, 0));
        for (const group of groups) {
          const layerId = layers.find((l) => l.getAttribute('value') === group.layer)?.getAttribute('id');
          for (const element of group.elements) {
            const matches = objects.filter((o) => o.getAttribute('rabbitId') === element.id);
            expect(matches, `${proto.id}/${page.id}/${element.id}`).toHaveLength(1);
            const object = matches[0] as Element;
            expect(cellOf(object).getAttribute('parent')).toBe(layerId);
            // U+FFFE cannot stand in XML; inside a JSON string its escape means the same.
            expect(object.getAttribute('rabbitJson')).toBe(element.raw.replace(/\uFFFE/g, '\\ufffe'));
            expect(JSON.parse(object.getAttribute('rabbitJson') ?? '')).toEqual(element.json);
            const { position, dimensions, target } = element.json as {
              position: { x: number; y: number };
              dimensions: { width: number; height: number };
              target?: string;
            };
            expect(geometryOf(object)).toEqual({
              x: position.x,
              y: position.y,
              width: dimensions.width,
              height: dimensions.height,
            });
            // A link to a page of the prototype names the diagram of that page (diagram ids are page ids,
            // checked above); any other target, none.
            const linked = proto.pages.some((p) => p.id === target);
            expect(object.getAttribute('link')).toBe(linked ? `data:page/id,${target}` : null);
            links += Number(linked);
            shapes++;
          }
        }

        // An element's text is its label (one without text is labelled by its shape: see the mapping test).
        const texted = groups
          .flatMap((g) => g.elements)
          .filter((e) => typeof (e.json as { text?: unknown }).text === 'string');
        expect(
          texted.map((e) => objects.find((o) => o.getAttribute('rabbitId') === e.id)?.getAttribute('label')),
        ).toEqual(texted.map((e) => withoutNonXml((e.json as { text: string }).text)));
        labelled += texted.length;

        const notes = cells.filter((c) => c.tagName === 'object' && c.getAttribute('rabbitDiscussionId') !== null);
        expect(notes).toHaveLength(page.discussions.length);
        for (const discussion of page.discussions) {
          const note = notes.find((n) => n.getAttribute('rabbitDiscussionId') === String(discussion.id)) as Element;
          expect(cellOf(note).getAttribute('parent')).toBe('discussions');
          expect(geometryOf(note)).toMatchObject({ x: discussion.positionX, y: discussion.positionY });
          const label = note.getAttribute('label') ?? '';
          const entries = discussion.entries as { author: string; text: string; timestamp: number }[];
          expect(label.split('\n')).toEqual([
            discussion.title,
            ...entries.map(
              (e) =>
                `${e.author}, ${new Date(e.timestamp).toISOString().slice(0, 16).replace('T', ' ')} UTC: ${e.text}`,
            ),
          ]);
        }
      }
      expect({ pages: result.pages, shapes: result.shapes, links: result.links }).toEqual({
        pages: proto.pages.length,
        shapes,
        links,
      });
      expect(labelled, `prototype ${proto.id} has elements with text`).toBeGreaterThan(0);
    }
  });

  it('maps types through the table, unknown ones to a labelled rectangle, with style, exact text and dropped characters counted', async () => {
    const out = await tempDir();
    const report = await convertArchive({ archive, out, prototypes: [EXTRA_PAGE.prototype] });
    const result = report.prototypes[0]!;
    expect(result.genericTypes).toEqual({ carousel: 1 });
    expect(result.droppedCharacters).toBe(DROPPED_CHARACTERS);
    expect(result.notes).toEqual([expect.objectContaining({ why: expect.stringContaining('page999') as unknown })]);
    expect(result.complete).toBe(true);

    const xml = await readFile(join(out, result.file!), 'utf8');
    // Nothing XML 1.0 cannot hold, not even as a character reference.
    expect(xml).not.toMatch(
      // eslint-disable-next-line no-control-regex
      /[\u0000-\u0008\u000b\u000c\u000e-\u001f\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|&#x?0*(?:[0-8bcefBCEF]|1[0-9a-fA-F]);/,
    );
    const diagram = (await diagramsOf(out, result.file!)).find(
      (d) => d.getAttribute('id') === EXTRA_PAGE.page,
    ) as Element;
    const objects = children(rootOf(diagram), 'object');
    const byType = (type: string): Element => objects.find((o) => o.getAttribute('rabbitType') === type) as Element;

    const carousel = byType('carousel');
    expect(carousel.getAttribute('label')).toBe('Slides <one> & "two"\nthird 🎠 end');
    const carouselStyle = cellOf(carousel).getAttribute('style') ?? '';
    expect(carouselStyle).toMatch(/^rounded=0;dashed=1;/);
    expect(carouselStyle).toContain(
      'fillColor=#ffcc00;opacity=50;fontFamily=Georgia;fontSize=14;fontColor=#333333;fontStyle=1;',
    );
    expect(JSON.parse(carousel.getAttribute('rabbitJson') ?? '')).toMatchObject({ ...EXTRA_ELEMENTS[0] });

    const dropdown = byType('dropdown');
    expect(dropdown.getAttribute('label')).toBe("Choose 'one'\r\n\ttab");
    expect(cellOf(dropdown).getAttribute('style')).toContain('shape=mxgraph.mockup.forms.comboBox;');
    expect(geometryOf(dropdown)).toEqual({ x: 10.5, y: 5.25, width: 100, height: 24 });
    expect(dropdown.hasAttribute('link')).toBe(false);

    const field = byType('textfield');
    expect(field.getAttribute('label')).toBe('Name &amp; <b>bold</b>');
    expect(cellOf(field).getAttribute('style')).toContain('fillColor=#eeeeff;opacity=80;fontSize=11;fontStyle=2;');
    // Plain-text labels: draw.io must not read the names' markup as HTML.
    for (const object of objects) expect(cellOf(object).getAttribute('style')).not.toContain('html=1');
  });

  it('leaves the rendering out with --no-rendering and keeps the page size', async () => {
    const out = await tempDir();
    const report = await convertArchive({ archive, out, prototypes: ['17'], rendering: false });
    expect(report.rendering).toBe(false);
    const diagrams = await diagramsOf(out, report.prototypes[0]!.file!);
    for (const diagram of diagrams) {
      const layers = children(rootOf(diagram)).filter((c) => c.getAttribute('parent') === '0');
      expect(layers.map((l) => l.getAttribute('value'))).not.toContain('Rendering');
      expect(children(diagram, 'mxGraphModel')[0]?.getAttribute('pageWidth')).toBe('320');
    }
  });

  it('stops when interrupted and leaves no half-written document behind', async () => {
    const out = await tempDir();
    const controller = new AbortController();
    const converted: string[] = [];
    const error: unknown = await convertArchive({
      archive,
      out,
      signal: controller.signal,
      onEvent: (event) => {
        converted.push(event.report.id);
        // Interrupt after the first prototype: it stays, the rest is never started.
        controller.abort();
      },
    }).catch((e: unknown) => e);
    expect(isRabbitError(error, 'INTERRUPTED')).toBe(true);
    expect(converted).toEqual(['3']);
    expect(await readdir(out)).toEqual(['3-foo-type.drawio']);
  });

  it('refuses a prototype the archive does not hold, as a usage error', async () => {
    const out = await tempDir();
    const error: unknown = await convertArchive({ archive, out, prototypes: ['3', '999'] }).catch((e: unknown) => e);
    expect(isRabbitError(error, 'NO_SUCH_PROTOTYPE')).toBe(true);
  });

  it('converts what it can of a damaged archive, says what was skipped and never changes the archive', async () => {
    const work = await tempDir();
    const damaged = join(work, 'damaged.zip');
    await copyFile(archive, damaged);
    // Damaged bytes in two entries, as on a failing disk: their CRC no longer matches.
    const dir3 = `prototypes/3/r${expected[0]!.revision}`;
    for (const name of [`${dir3}/pages/page7830/elements/element6.json`, `${dir3}/pages/page0001.png`]) {
      await flipByte(damaged, (await dataOffsetOf(damaged, name)) + 2);
    }
    const before = createHash('sha256')
      .update(await readFile(damaged))
      .digest('hex');
    const out = join(work, 'out');
    const report = await convertArchive({ archive: damaged, out });
    expect(
      createHash('sha256')
        .update(await readFile(damaged))
        .digest('hex'),
    ).toBe(before);
    expect(report.complete).toBe(false);
    const three = report.prototypes.find((p) => p.id === '3')!;
    expect(three.complete).toBe(false);
    expect(three.skipped.map((s) => s.what).sort()).toEqual([
      'element element6 of page page7830',
      'the rendering of page page0001',
    ]);
    expect(report.prototypes.filter((p) => p.id !== '3').every((p) => p.complete)).toBe(true);
    // The rest of the page is still there.
    const diagrams = await diagramsOf(out, three.file!);
    const checkout = children(rootOf(diagrams[1] as Element), 'object').map((o) => o.getAttribute('rabbitId'));
    expect(checkout).toContain('element7');
    expect(checkout).not.toContain('element6');
  });

  /** Prototype 3 converted from a copy of the archive whose pages.json is damaged. */
  async function convertWithoutPageList(to: 'drawio' | 'pdf' | 'svg') {
    const work = await tempDir();
    const damaged = join(work, 'damaged.zip');
    await copyFile(archive, damaged);
    const proto = expected.find((p) => p.id === '3')!;
    const list = `prototypes/3/r${proto.revision}/pages.json`;
    await flipByte(damaged, (await dataOffsetOf(damaged, list)) + 1);
    const out = join(work, 'out');
    const report = await convertArchive({ archive: damaged, out, to, prototypes: ['3'] });
    return { out, list, proto, three: report.prototypes[0]!, pageIds: proto.pages.map((p) => p.id).sort(compareIds) };
  }

  it.each(['drawio', 'pdf', 'svg'] as const)(
    '--to %s: a damaged pages.json loses only the page order, taken then from the page files',
    async (to) => {
      const { list, proto, three, pageIds } = await convertWithoutPageList(to);
      expect(three.complete).toBe(false);
      expect(three.skipped).toEqual([{ what: 'the list of pages', why: expect.stringContaining(list) as unknown }]);
      expect(three.notes).toContainEqual({
        what: 'the page order',
        why: expect.stringContaining('pages.json') as unknown,
      });
      expect(three.file).not.toBeNull();
      expect(three.pages).toBe(pageIds.length);
      expect(three.discussions).toBe(proto.pages.reduce((sum, p) => sum + p.discussions.length, 0));
    },
  );

  it('--to drawio without pages.json: the diagrams in page id order', async () => {
    const { out, three, pageIds } = await convertWithoutPageList('drawio');
    expect((await diagramsOf(out, three.file!)).map((d) => d.getAttribute('id'))).toEqual(pageIds);
  });

  it('--to svg without pages.json: the page files numbered in page id order', async () => {
    const { out, three, pageIds } = await convertWithoutPageList('svg');
    expect((await readdir(join(out, three.file!))).sort()).toEqual(
      pageIds.map((id, index) => `${String(index + 1).padStart(2, '0')}-${id}.svg`),
    );
  });

  it('names a missing entry by its full name in the archive', async () => {
    const work = await tempDir();
    const damaged = join(work, 'missing.zip');
    await copyFile(archive, damaged);
    const revision = expected.find((p) => p.id === '17')!.revision;
    // Renamed in the zip, still listed by the manifest: listed, but not in the archive.
    const png = `prototypes/17/r${revision}/pages/page1.png`;
    await renameInPlace(damaged, png, png.replace(/png$/, 'pnx'));
    const report = await convertArchive({ archive: damaged, out: join(work, 'out'), prototypes: ['17'] });
    expect(report.prototypes[0]?.skipped).toEqual([
      { what: 'the rendering of page page1', why: `${png} is not in the archive` },
    ]);
  });

  it.each(['drawio', 'pdf', 'svg'] as const)(
    '--to %s notes a target naming no page as a sentence, and counts each dropped character once',
    async (to) => {
      const out = await tempDir();
      const report = await convertArchive({ archive, out, to, prototypes: [EXTRA_PAGE.prototype] });
      const result = report.prototypes[0]!;
      expect(result.droppedCharacters).toBe(DROPPED_CHARACTERS);
      expect(result.notes).toEqual([
        {
          what: expect.stringMatching(new RegExp(`^element element\\d+ on page ${EXTRA_PAGE.page}$`)) as unknown,
          why: 'links to page999, which is not a page of this prototype, so it has no link',
        },
      ]);
    },
  );
});
