import { parseSource, sourceOf, type PathIds } from '../api/entry-paths.js';
import { RESOURCE_KINDS } from '../api/resource-kinds.js';
import type { IdKind } from '../api/ids.js';
import { ownerKindOf } from '../api/ids.js';

/**
 * What an archived entry is, read from the API path it was served from (its manifest `source`):
 * the lists that name resources, the resources' own JSON, and the renderings of a page. Sources
 * outside the API (page assets) and files rabbit-export generated are not service resources and
 * are not checked against the service.
 */
export type ResourceKind = 'prototype' | 'page' | 'layer' | 'element' | 'discussion' | 'rendering';

/** A rendering of a page: as the archive names its format. */
export type RenderingFormat = 'html' | 'png' | 'xhtml-sketched' | 'xhtml-plain';

export type LiveResource =
  | {
      type: 'list';
      /** What the list names. */
      member: IdKind;
      /** The prototype it belongs to; undefined for the account's list of prototypes. */
      prototype?: string;
      /** The page or layer whose elements or discussions it lists. */
      parent?: string;
    }
  | {
      type: 'resource';
      kind: ResourceKind;
      prototype: string;
      /** The resource's id; a rendering's is its page's. */
      id: string;
      /** The page or layer an element is on. */
      parent?: string;
      format?: RenderingFormat;
    };

/** The resource an archived entry holds, or undefined when it is not one the service serves under the API. */
export function liveResourceOf(source: string): LiveResource | undefined {
  const parsed = parseSource(source);
  if (parsed === undefined) return undefined;
  const { member, item, format } = RESOURCE_KINDS[parsed.kind];
  const prototype = parsed.prototype as string;
  const parent = parsed.page ?? parsed.layer;
  if (member !== undefined) {
    const listed = RESOURCE_KINDS[member].item as IdKind;
    if (parsed.kind === 'prototype-list') return { type: 'list', member: listed };
    return { type: 'list', member: listed, prototype, ...(parent === undefined ? {} : { parent }) };
  }
  const id = parsed[item as IdKind] as string;
  if (format !== undefined) return { type: 'resource', kind: 'rendering', prototype, id, format };
  const resource: LiveResource = { type: 'resource', kind: item as IdKind, prototype, id };
  return item === 'element' ? { ...resource, parent: parent as string } : resource;
}

/** Whether the service also served the list at `source` as `{"id": "name"}` objects. */
export function inObjectForm(source: string): boolean {
  const parsed = parseSource(source);
  return parsed !== undefined && RESOURCE_KINDS[parsed.kind].objectForm === true;
}

/** Where a member named in a list is served (its own JSON), below its list's parent. */
export function memberSource(member: IdKind, id: string, prototype: string, parent?: string): string {
  const ids: PathIds = { prototype, [member]: id };
  if (member !== 'element') return sourceOf(member, ids);
  // An element list always has its page or layer; without one, sourceOf refuses the source.
  if (parent === undefined) return sourceOf('page-element', ids);
  return ownerKindOf(parent) === 'layer'
    ? sourceOf('layer-element', { ...ids, layer: parent })
    : sourceOf('page-element', { ...ids, page: parent });
}
