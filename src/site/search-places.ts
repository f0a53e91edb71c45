import type { Places } from '../search/prototype-records.js';
import { prototypeIndexPath } from './index-html.js';
import { revisionEntryNameOf, revisionFolderOf } from '../api/entry-paths.js';

/**
 * Where search sends a reader of a prototype's texts: a page's viewable copy (at the element, whose
 * id the rendering carries) when the archive has one, else the prototype's overview page.
 */
export function placesOf(prototype: { id: string; revision: number; has(rest: string): boolean }): Places {
  return {
    overview: prototypeIndexPath(prototype.id),
    pageView(pageId) {
      const view = revisionEntryNameOf('page-view', { page: pageId });
      return prototype.has(view) ? revisionFolderOf(prototype.id, prototype.revision) + view : undefined;
    },
  };
}
