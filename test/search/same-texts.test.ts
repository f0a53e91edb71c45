import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openArchive, type Archive } from '../../src/archive/open-archive.js';
import type { ArchiveCatalog } from '../../src/archive/archive-catalog.js';
import { PrototypeReader } from '../../src/convert/prototype-data.js';
import { ArchivedTexts } from '../../src/search/archived-texts.js';
import { tempDir } from '../helpers/temp.js';
import { searchArchives } from './search-archive-fixture.js';

/**
 * Search reads an archive's texts with a reader of its own (it sits below convert in the layer
 * order, see archived-texts.ts): held here to what convert's reader takes from the same bodies.
 */
describe('search reads the texts convert reads', () => {
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

  it('the same pages, names, layers, element texts and discussions, prototype by prototype', async () => {
    let elements = 0;
    for (const id of catalog.prototypeIds()) {
      const prototype = catalog.prototype(id);
      if (prototype === undefined) throw new Error(`no prototype ${id}`);
      const convert = new PrototypeReader(prototype);
      const search = new ArchivedTexts(prototype);
      const pageIds = await convert.pageIds();
      expect(await search.pageIds(), id).toEqual(pageIds);
      for (const pageId of pageIds) {
        const meta = await convert.pageMeta(pageId);
        const page = await search.page(pageId);
        expect(page.name ?? pageId).toBe(meta.name);
        expect(page.layerIds).toEqual(meta.layerIds);
        const parents = [`pages/${pageId}`, ...meta.layerIds.map((layer) => `layers/${layer}`)];
        for (const parent of parents) {
          const theirs = (await convert.elements(parent, parent)).map((e) => [e.id, e.text]);
          expect(
            (await search.elements(parent)).map((e) => [e.id, e.text]),
            parent,
          ).toEqual(theirs);
          elements += theirs.length;
        }
        for (const layerId of meta.layerIds)
          expect((await search.layerName(layerId)) ?? layerId).toBe((await convert.layer(layerId)).name);
      }
      const discussions = [];
      for await (const d of search.discussions()) discussions.push([d.id, d.pageId, d.title, d.entries]);
      expect(discussions).toEqual(
        (await convert.discussions()).map((d) => [d.id, d.pageId, d.title, d.entries.map((e) => e.text)]),
      );
    }
    expect(elements).toBeGreaterThan(20);
  });
});
