import { parseSource, sourceOf, type PathIds } from '../api/entry-paths.js';
import { isListedItem, type RenderingFormat } from '../api/kind-lists.js';
import { RESOURCE_KINDS, type BodyKind, type KindName } from '../api/resource-kinds.js';
import type { IdKind } from '../api/ids.js';
import { ownerKindOf } from '../api/ids.js';

/**
 * What an archived entry is, read from the API path it was served from (its manifest `source`):
 * the lists that name resources, the resources' own JSON, and what the service serves of one of
 * them (a page's renderings). Sources outside the API (page assets) and files rabbit-export
 * generated are not service resources and are not checked against the service.
 *
 * A resource is counted by the table of kinds: one a list names by its id (`page`, `element`...),
 * a rendering by its format, any other kind by its own name, so a kind added to the table is a
 * kind of the check's own and never counted as the item it belongs to.
 */
export type ResourceKind = IdKind | 'rendering' | KindName;

export type { RenderingFormat };

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
      /** What `id` names: the resource itself, or the item it belongs to (a rendering's page). */
      item: IdKind;
      /** The resource's id; a rendering's is its page's. */
      id: string;
      /** The page or layer an element is on. */
      parent?: string;
      format?: RenderingFormat;
      /** How its body is compared. */
      body: BodyKind;
    };

/** How the check counts a kind of the table that is not a list. */
function liveKindOf(kind: KindName): ResourceKind {
  const { item, format } = RESOURCE_KINDS[kind];
  if (format !== undefined) return 'rendering';
  return item !== undefined && (isListedItem(kind) || kind === item) ? item : kind;
}

/** The resource an archived entry holds, or undefined when it is not one the service serves under the API. */
export function liveResourceOf(source: string): LiveResource | undefined {
  const parsed = parseSource(source);
  if (parsed === undefined) return undefined;
  const { member, item, format, body } = RESOURCE_KINDS[parsed.kind];
  const prototype = parsed.prototype as string;
  const parent = parsed.page ?? parsed.layer;
  if (member !== undefined) {
    const listed = RESOURCE_KINDS[member].item as IdKind;
    if (parsed.kind === 'prototype-list') return { type: 'list', member: listed };
    return { type: 'list', member: listed, prototype, ...(parent === undefined ? {} : { parent }) };
  }
  const of = item as IdKind;
  const resource: LiveResource = {
    type: 'resource',
    kind: liveKindOf(parsed.kind),
    prototype,
    item: of,
    id: parsed[of] as string,
    body,
    ...(format === undefined ? {} : { format }),
  };
  return of === 'element' ? { ...resource, parent: parent as string } : resource;
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
