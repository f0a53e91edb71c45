import { API_PREFIX } from '../api/paths.js';
import type { IdKind } from '../api/ids.js';

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

const ID = '([A-Za-z0-9]+)';
const PATTERNS: [RegExp, (m: string[]) => LiveResource][] = [
  [/^prototypes\.json$/, () => ({ type: 'list', member: 'prototype' })],
  [new RegExp(`^prototypes/${ID}\\.json$`), ([, p]) => res('prototype', p, p)],
  [new RegExp(`^prototypes/${ID}/(pages|layers|discussions)\\.json$`), ([, p, what]) => list(memberOf(what), p)],
  [
    new RegExp(`^prototypes/${ID}/(pages|layers)/${ID}/elements\\.json$`),
    ([, p, , parent]) => list('element', p, parent),
  ],
  [new RegExp(`^prototypes/${ID}/pages/${ID}/discussions\\.json$`), ([, p, parent]) => list('discussion', p, parent)],
  [
    new RegExp(`^prototypes/${ID}/(pages|layers)/${ID}/elements/${ID}\\.json$`),
    ([, p, , parent, id]) => ({ ...res('element', p, id), parent: parent as string }),
  ],
  [new RegExp(`^prototypes/${ID}/pages/${ID}\\.json$`), ([, p, id]) => res('page', p, id)],
  [new RegExp(`^prototypes/${ID}/layers/${ID}\\.json$`), ([, p, id]) => res('layer', p, id)],
  [new RegExp(`^prototypes/${ID}/discussions/${ID}\\.json$`), ([, p, id]) => res('discussion', p, id)],
  [new RegExp(`^prototypes/${ID}/pages/${ID}\\.(html|png)$`), ([, p, id, f]) => rendering(p, id, f)],
  [
    new RegExp(`^prototypes/${ID}/pages/${ID}\\.xhtml\\?mode=(sketched|plain)$`),
    ([, p, id, mode]) => rendering(p, id, `xhtml-${mode as string}`),
  ],
];

/** The resource an archived entry holds, or undefined when it is not one the service serves under the API. */
export function liveResourceOf(source: string): LiveResource | undefined {
  if (!source.startsWith(API_PREFIX)) return undefined;
  const rest = source.slice(API_PREFIX.length);
  for (const [pattern, make] of PATTERNS) {
    const match = pattern.exec(rest);
    if (match) return make(match as unknown as string[]);
  }
  return undefined;
}

/** Where the service serves a list or a resource, built from ids already checked for their shape. */
export function sourceOf(prototype: string, rest: string): string {
  return `${API_PREFIX}prototypes/${prototype}${rest}`;
}

/** Where a member named in a list is served (its own JSON), below its list's parent. */
export function memberSource(member: IdKind, id: string, prototype: string, parent?: string): string {
  switch (member) {
    case 'prototype':
      return `${API_PREFIX}prototypes/${id}.json`;
    case 'page':
      return sourceOf(prototype, `/pages/${id}.json`);
    case 'layer':
      return sourceOf(prototype, `/layers/${id}.json`);
    case 'discussion':
      return sourceOf(prototype, `/discussions/${id}.json`);
    case 'element':
      return sourceOf(
        prototype,
        `/${parent?.startsWith('layer') ? 'layers' : 'pages'}/${parent ?? ''}/elements/${id}.json`,
      );
  }
}

function memberOf(plural: string | undefined): IdKind {
  return plural === 'pages' ? 'page' : plural === 'layers' ? 'layer' : 'discussion';
}

function list(member: IdKind, prototype: string | undefined, parent?: string): LiveResource {
  return { type: 'list', member, prototype: prototype as string, ...(parent ? { parent } : {}) };
}

function res(kind: ResourceKind, prototype: string | undefined, id: string | undefined): LiveResource {
  return { type: 'resource', kind, prototype: prototype as string, id: id as string };
}

function rendering(prototype: string | undefined, id: string | undefined, format: string | undefined): LiveResource {
  return { ...res('rendering', prototype, id), format: format as RenderingFormat } as LiveResource;
}
