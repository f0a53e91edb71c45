import type { Places } from '../search/prototype-records.js';
import { prototypeIndexPath } from './index-html.js';
import { viewPathOf } from './view-path.js';

/**
 * Where search sends a reader of a prototype's texts: a page's viewable copy (at the element, whose
 * id the rendering carries) when the archive has one, else the prototype's overview page.
 */
export function placesOf(prototype: { id: string; revision: number; has(rest: string): boolean }): Places {
  const folder = `prototypes/${prototype.id}/r${prototype.revision}/`;
  return {
    overview: prototypeIndexPath(prototype.id),
    pageView(pageId) {
      const view = viewPathOf(`pages/${pageId}.html`);
      return prototype.has(view) ? folder + view : undefined;
    },
  };
}
