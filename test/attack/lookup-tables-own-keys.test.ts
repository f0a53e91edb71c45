import { describe, expect, it } from 'vitest';
import { diagramXml } from '../../src/convert/drawio-xml.js';
import type { PageContent } from '../../src/convert/page-walk.js';
import type { ElementData } from '../../src/convert/prototype-data.js';
import { XmlText } from '../../src/convert/xml-text.js';
import { parseGeneratedEntry } from '../../src/api/generated-entries.js';
import { changedAttributes, extraAttributes } from '../../src/restore/element-shape.js';
import { decodeEntities } from '../../src/site/requisites/html-refs.js';
import { assetPath } from '../../src/site/requisites/asset-types.js';
import { contentTypeFor } from '../../src/viewer/serve-archive.js';

/**
 * Tables and tallies kept in plain objects, looked up or counted by a name the service or the
 * archive chose: an object answers `constructor` (and `__proto__`, `toString`...) from its
 * prototype, so such a name is found in a table that never listed it, or counted from a function.
 * The manifest's own reader refuses `__proto__` since today; these readers of the same hostile
 * names did not look.
 */

const SHA = 'a'.repeat(64);

describe('a lookup table answers only the names it lists', () => {
  it.each(['constructor', '__proto__', 'Constructor; charset=utf-8'])(
    'an asset served as %j gets the extension of an unknown type, and a name the archive format knows',
    (contentType) => {
      const path = assetPath(SHA, contentType);
      expect(path).toBe(assetPath(SHA, 'application/x-unknown'));
      expect(parseGeneratedEntry(path)).toMatchObject({ name: 'asset' });
    },
  );

  it('view serves an entry named *.constructor as any unknown type', () => {
    expect(contentTypeFor('prototypes/1/x.constructor')).toBe('application/octet-stream');
  });

  it.each(['&constructor;', '&toString;', '&valueOf;', '&hasOwnProperty;'])(
    'a named reference %s no table lists is left as written in a URL attribute',
    (reference) => {
      expect(decodeEntities(`a${reference}b`)).toBe(`a${reference}b`);
    },
  );
});

describe('a tally counts every name as a number', () => {
  const element = (id: string, type: string): ElementData => ({
    id,
    entry: `pages/page1/elements/${id}.json`,
    raw: JSON.stringify({ id, type }),
    type,
    box: { x: 0, y: 0, width: 10, height: 10 },
    text: null,
    target: null,
    style: {},
  });
  const content = (elements: ElementData[]): PageContent => ({
    page: { id: 'page1', name: 'Page', layerIds: [] },
    number: 1,
    size: { width: 100, height: 100 },
    png: undefined,
    layers: [],
    elements,
    discussions: [],
  });

  it.each(['toString', 'valueOf', '__proto__', 'constructor'])(
    'draw.io counts elements of type %j drawn as plain rectangles',
    (type) => {
      const { stats } = diagramXml(
        { ...content([element('element1', type), element('element2', type)]), pageIds: new Set(['page1']) },
        new XmlText(),
      );
      expect(Object.entries(stats.generic)).toEqual([[type, 2]]);
    },
  );
});

describe("restore compares an element's own attributes only", () => {
  it('a live attribute named constructor or toString that the archive lacks is an extra attribute', () => {
    expect(extraAttributes({ type: 'text' }, { type: 'text', constructor: 'x', toString: 1 })).toEqual([
      'constructor',
      'toString',
    ]);
  });

  it('an archived attribute the live element lacks is to be sent, whatever its name', () => {
    expect(changedAttributes({ type: 'text', constructor: null }, { type: 'text' })).toEqual(['constructor']);
  });
});
