import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { elementSourcesOf } from '../../src/api/entry-paths.js';
import { ownerKindOf } from '../../src/api/ids.js';
import { LiveElements } from '../../src/restore/live-elements.js';
import type { LiveService } from '../../src/restore/live-service.js';

/**
 * A page or layer is told by its id alone in one place (api/ids.ts): restore writes to the parent
 * every reader of the archive means, also for an id of neither shape from an archive someone
 * handed over.
 */
describe('restore and the kind of an element parent', () => {
  // Only the names are asked for: nothing is sent.
  const live = new LiveElements({} as LiveService, '7', pLimit(1));

  it.each(['page1', 'layer1', 'x1', 'Page1', 'pagelayer', 'layerpage'])('names %s as every reader does', (parent) => {
    const sources = elementSourcesOf('7', ownerKindOf(parent), parent);
    expect(live.paths.list(parent)).toBe(sources.list);
    expect(live.paths.element(parent, 'element2')).toBe(sources.element('element2'));
    expect(live.paths.bare(parent, 'element2')).toBe(sources.bare('element2'));
  });
});
