import type { IdKind } from './ids.js';

/**
 * Every kind of resource the service serves and the archive holds, in one table: where the service
 * serves it, where the archive keeps it, which ids name it, what it belongs to and what the crawl
 * fetches with it. Paths are built and taken apart from this table alone (entry-paths.ts), and the
 * lists readers keep of kinds (formats, link and live-check kinds, ls columns) are derived from it
 * (kind-lists.ts), so a new kind is its name and one row here. What rabbit-export names itself
 * (the manifest, the viewer's files, page assets) is in the table beside it, generated-entries.ts.
 *
 * Templates name their ids in braces: `{prototype}`, `{page}`, `{layer}`, `{element}`,
 * `{discussion}` (each checked against its shape in ids.ts) and `{key}` (the number of an extra
 * API key, 2 and up). A revision's entries sit under `prototypes/{prototype}/r{revision}/`.
 */
/** All API paths live under this prefix. */
export const API_PREFIX = '/rabbit/api/';

export type KindName =
  | 'prototype-list'
  | 'key-list'
  | 'prototype'
  | 'page-list'
  | 'page'
  | 'page-html'
  | 'page-png'
  | 'page-sketched'
  | 'page-plain'
  | 'page-view'
  | 'page-element-list'
  | 'page-element'
  | 'page-discussion-list'
  | 'layer-list'
  | 'layer'
  | 'layer-element-list'
  | 'layer-element'
  | 'discussion-list'
  | 'discussion';

/**
 * The rendering a user asks for with `--formats`, besides the JSON that is always fetched: the
 * formats of the rows below (kind-lists.ts lists them in the table's order).
 */
export type Format = 'json' | 'html' | 'png' | 'xhtml-sketched' | 'xhtml-plain';

/** How a body is checked as it arrives, and which size cap it has. */
export type BodyKind = 'json' | 'html' | 'png';

/**
 * How `diff` counts a changed file of a prototype, in the order it reports them: a prototype's
 * items, its renderings, its lists, its own metadata, and anything else.
 */
export const CATEGORIES = [
  'pages',
  'layers',
  'elements',
  'discussions',
  'renderings',
  'lists',
  'metadata',
  'other',
] as const;
export type Category = (typeof CATEGORIES)[number];

export interface ResourceKind {
  /**
   * The API path below `/rabbit/api/`; null for what the service does not serve under a path of
   * its own (another key's list, which is `prototypes.json` asked with that key; generated files).
   */
  api: string | null;
  /** The query the API path carries (the older page views' mode), part of the manifest source. */
  query?: string;
  /** `account`: `entry` is a name at the archive's root; `revision`: below the revision's folder. */
  scope: 'account' | 'revision';
  entry: string;
  /** The id that names one of this kind (a rendering is named by its page's). */
  item?: IdKind;
  /** What it belongs to. */
  parent: KindName | null;
  /** For a list: the kind of what it names. */
  member?: KindName;
  /** A list the service also served as `{"id": "name"}` objects. */
  objectForm?: boolean;
  /** What the crawl fetches for each one of this kind, in this order, besides its own body. */
  children: readonly KindName[];
  /** How its body is checked. */
  body: BodyKind;
  /** The `--formats` name it is fetched for; absent: always fetched. */
  format?: Exclude<Format, 'json'>;
  /** A 404 means the service does not offer it, which is no error. */
  notOfferedOn404?: boolean;
  /** Made by rabbit-export from the entry of that kind, never fetched. */
  generatedFrom?: KindName;
  category: Category;
  /** How `diff` names a changed item, by the same placeholders; absent: by its path below the prototype. */
  categoryId?: string;
}

const PROTOTYPE = 'prototypes/{prototype}';
/** The API folder of a prototype's own resources, which is also where its revisions sit in the archive. */
export const PROTOTYPE_FOLDER = `${PROTOTYPE}/`;
/** The archive folder of a prototype's revision: `revision` entries are named below it. */
export const REVISION_FOLDER = `${PROTOTYPE}/r{revision}/`;
/**
 * Where a page's assets sit, by the hash of their body: what the service served at any path its
 * pages name, an API path of one of the kinds above included (one asked with a query, or of a
 * prototype not archived), so an asset's source says nothing of its name.
 */
export const ASSET_FOLDER = 'assets/';
const PAGE = `${PROTOTYPE}/pages/{page}`;
const LAYER = `${PROTOTYPE}/layers/{layer}`;

export const RESOURCE_KINDS: Readonly<Record<KindName, ResourceKind>> = {
  'prototype-list': {
    api: 'prototypes.json',
    scope: 'account',
    entry: 'prototypes.json',
    parent: null,
    member: 'prototype',
    children: [],
    body: 'json',
    category: 'lists',
  },
  'key-list': {
    api: null,
    scope: 'account',
    entry: 'prototypes.key{key}.json',
    parent: null,
    member: 'prototype',
    children: [],
    body: 'json',
    category: 'lists',
  },
  prototype: {
    api: `${PROTOTYPE}.json`,
    scope: 'revision',
    entry: 'prototype.json',
    item: 'prototype',
    parent: 'prototype-list',
    children: ['page-list', 'layer-list', 'discussion-list'],
    body: 'json',
    category: 'metadata',
    categoryId: 'prototype',
  },
  'page-list': list(`${PROTOTYPE}/pages.json`, 'pages.json', 'prototype', 'page', { objectForm: true }),
  page: {
    api: `${PAGE}.json`,
    scope: 'revision',
    entry: 'pages/{page}.json',
    item: 'page',
    parent: 'prototype',
    children: ['page-html', 'page-png', 'page-sketched', 'page-plain', 'page-element-list', 'page-discussion-list'],
    body: 'json',
    category: 'pages',
    categoryId: '{page}',
  },
  'page-html': rendering(`${PAGE}.html`, 'pages/{page}.html', 'html', { categoryId: '{page}.html' }),
  'page-png': rendering(`${PAGE}.png`, 'pages/{page}.png', 'png', { categoryId: '{page}.png' }),
  'page-sketched': rendering(`${PAGE}.xhtml`, 'pages/{page}.sketched.xhtml', 'xhtml-sketched', {
    query: 'mode=sketched',
    notOfferedOn404: true,
  }),
  'page-plain': rendering(`${PAGE}.xhtml`, 'pages/{page}.plain.xhtml', 'xhtml-plain', {
    query: 'mode=plain',
    notOfferedOn404: true,
  }),
  'page-view': {
    api: null,
    scope: 'revision',
    entry: 'pages/{page}.view.html',
    item: 'page',
    parent: 'page',
    children: [],
    body: 'html',
    generatedFrom: 'page-html',
    category: 'other',
  },
  'page-element-list': list(`${PAGE}/elements.json`, 'pages/{page}/elements.json', 'page', 'page-element'),
  'page-element': element(`${PAGE}/elements/{element}.json`, 'pages/{page}/elements/{element}.json', 'page'),
  'page-discussion-list': list(`${PAGE}/discussions.json`, 'pages/{page}/discussions.json', 'page', 'discussion'),
  'layer-list': list(`${PROTOTYPE}/layers.json`, 'layers.json', 'prototype', 'layer'),
  layer: {
    api: `${LAYER}.json`,
    scope: 'revision',
    entry: 'layers/{layer}.json',
    item: 'layer',
    parent: 'prototype',
    children: ['layer-element-list'],
    body: 'json',
    category: 'layers',
    categoryId: '{layer}',
  },
  'layer-element-list': list(`${LAYER}/elements.json`, 'layers/{layer}/elements.json', 'layer', 'layer-element'),
  'layer-element': element(`${LAYER}/elements/{element}.json`, 'layers/{layer}/elements/{element}.json', 'layer'),
  'discussion-list': list(`${PROTOTYPE}/discussions.json`, 'discussions.json', 'prototype', 'discussion'),
  discussion: {
    api: `${PROTOTYPE}/discussions/{discussion}.json`,
    scope: 'revision',
    entry: 'discussions/{discussion}.json',
    item: 'discussion',
    parent: 'prototype',
    children: [],
    body: 'json',
    category: 'discussions',
    categoryId: '{discussion}',
  },
};

export const KIND_NAMES = Object.keys(RESOURCE_KINDS) as KindName[];

function list(
  api: string,
  entry: string,
  parent: KindName,
  member: KindName,
  extra: Partial<ResourceKind> = {},
): ResourceKind {
  return { api, scope: 'revision', entry, parent, member, children: [], body: 'json', category: 'lists', ...extra };
}

function rendering(
  api: string,
  entry: string,
  format: Exclude<Format, 'json'>,
  extra: Partial<ResourceKind>,
): ResourceKind {
  const body = format === 'png' ? 'png' : 'html';
  const category = extra.categoryId === undefined ? 'other' : 'renderings';
  return {
    api,
    scope: 'revision',
    entry,
    item: 'page',
    parent: 'page',
    children: [],
    body,
    format,
    category,
    ...extra,
  };
}

function element(api: string, entry: string, parent: 'page' | 'layer'): ResourceKind {
  return {
    api,
    scope: 'revision',
    entry,
    item: 'element',
    parent,
    children: [],
    body: 'json',
    category: 'elements',
    categoryId: `{${parent}}/{element}`,
  };
}
