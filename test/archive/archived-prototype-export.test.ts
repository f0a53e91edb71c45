import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openArchive, type Archive } from '../../src/archive/open-archive.js';
import type { ArchiveCatalog, ArchivedPrototype } from '../../src/archive/archive-catalog.js';
import { ArchivedPrototypeReader, type EntryProblem } from '../../src/archive/archived-prototype-reader.js';
import { PrototypeReader } from '../../src/convert/prototype-data.js';
import { prototypeRecords } from '../../src/search/prototype-records.js';
import { tempDir } from '../helpers/temp.js';
import { ADDED, LAYER, PAGE, searchArchives } from '../search/search-archive-fixture.js';

/**
 * The one reader of an archived prototype on a real export, read through the archive's catalog:
 * it reads all of it without a problem, and convert and search, each with what it adds (convert's
 * defaults and geometry bound, search's records), take the same pages and texts from it.
 */
describe('the reader of an archived prototype, on an export', () => {
  let archive: Archive;
  let catalog: ArchiveCatalog;

  beforeAll(async () => {
    const { archive: path } = await searchArchives(await tempDir());
    archive = await openArchive(path);
    catalog = await archive.catalog();
  });

  afterAll(async () => {
    await catalog?.close();
    archive?.close();
  });

  const prototypes = (): ArchivedPrototype[] =>
    catalog.prototypeIds().map((id) => catalog.prototype(id) ?? expect.fail(`no prototype ${id}`));

  it('reads every prototype whole, with nothing to tell', async () => {
    let elements = 0;
    for (const prototype of prototypes()) {
      const problems: EntryProblem[] = [];
      const reader = new ArchivedPrototypeReader(prototype, { onProblem: (p) => problems.push(p) });
      const order = await reader.pageOrder();
      expect(order.listed, prototype.id).toBe(true);
      for await (const page of reader.pages(order.ids)) {
        for await (const _element of reader.elements('page', page.id)) elements++;
        for (const layerId of page.layerIds) for await (const _element of reader.elements('layer', layerId)) elements++;
      }
      await reader.meta();
      for await (const _discussion of reader.discussions());
      expect(problems, prototype.id).toEqual([]);
    }
    expect(elements).toBeGreaterThan(20);
  });

  it('reads the texts added to a page and a layer, in every script', async () => {
    const reader = new ArchivedPrototypeReader(catalog.prototype('3')!);
    const texts = async (parent: 'page' | 'layer', id: string) => {
      const out: (string | null)[] = [];
      for await (const element of reader.elements(parent, id)) out.push(element.text);
      return out;
    };
    const { onLayer, ...onPage } = ADDED;
    expect(await texts('page', PAGE)).toEqual(expect.arrayContaining(Object.values(onPage).map((e) => e.text)));
    expect(await texts('layer', LAYER)).toContain(onLayer.text);
  });

  it('convert and search take the same pages, names, element texts and discussions from it', async () => {
    for (const prototype of prototypes()) {
      const convert = new PrototypeReader(prototype);
      const pages = [];
      for (const pageId of await convert.pageIds()) pages.push(await convert.pageMeta(pageId));
      const records = [];
      const places = { overview: 'index.html', pageView: () => undefined };
      for await (const record of prototypeRecords(prototype, prototype, places)) records.push(record);
      const named = records.filter((r) => r.kind === 'page').map((r) => [r.page, r.text]);
      expect(named, prototype.id).toEqual(pages.filter((p) => p.name !== p.id).map((p) => [p.id, p.name]));
      const seen = new Set<string>();
      const drawn: [string, string][] = [];
      for (const page of pages) {
        for (const e of await convert.elements('page', page.id)) if (e.text) drawn.push([e.id, e.text]);
        for (const layerId of page.layerIds.filter((id) => !seen.has(id) && seen.add(id)))
          for (const e of (await convert.layer(layerId)).elements) if (e.text) drawn.push([e.id, e.text]);
      }
      const found = records.filter((r) => r.kind === 'element' && r.field === 'text').map((r) => [r.id, r.text]);
      expect(found, prototype.id).toEqual(drawn);
      const titles = (await convert.discussions()).filter((d) => d.title !== '').map((d) => [d.id, d.title]);
      expect(records.filter((r) => r.field === 'title').map((r) => [r.id, r.text])).toEqual(titles);
      expect(convert.skipped, prototype.id).toEqual([]);
    }
  });
});
