/**
 * The account the fake service holds, as plain data. Representations (JSON, XHTML, PNG) are
 * rendered from these records; nothing here knows about HTTP.
 */
export interface DatasetOptions {
  /** Ordinary prototypes beyond the fixed awkward ones. */
  prototypes: number;
  pagesPerPrototype: number;
  elementsPerPage: number;
  layersPerPrototype: number;
  elementsPerLayer: number;
  discussionsPerPrototype: number;
  /** Extra incompressible bytes per page PNG, streamed rather than held in memory. */
  pngPaddingBytes: number;
  /** Include the prototype whose pages.json uses the old API's `{"pageN": "name"}` object form. */
  legacyPagesList: boolean;
  /** Size of the page PNGs; the element boxes are scaled to it. Small for big benchmarks. */
  pngWidth: number;
  pngHeight: number;
  /** Serve the older page views (`.xhtml?mode=sketched|plain`); false answers them 404. */
  pageViews: boolean;
  /**
   * Include a prototype whose id and discussion ids lie past 2^53 (9007199254740993 ...), served
   * as JSON numbers with all their digits: JSON.parse would read a neighbour's id.
   */
  bigIds: boolean;
}

export const DEFAULT_DATASET: Readonly<DatasetOptions> = {
  prototypes: 2,
  pagesPerPrototype: 4,
  elementsPerPage: 5,
  layersPerPrototype: 2,
  elementsPerLayer: 3,
  discussionsPerPrototype: 3,
  pngPaddingBytes: 0,
  legacyPagesList: true,
  pngWidth: 320,
  pngHeight: 240,
  pageViews: true,
  bigIds: false,
};

/** Prototype and discussion ids: a bigint where a number would lose digits (bigIds). */
export type IntegerId = number | bigint;

export interface Position {
  x: number;
  y: number;
}

export interface Dimensions {
  width: number;
  height: number;
}

/** Attributes beyond these are kept and served as sent: the API lets clients add their own. */
export interface ElementRecord {
  [attribute: string]: unknown;
  id: string;
  type: string;
}

export interface PageRecord {
  id: string;
  name: string;
  layers: string[];
  elements: ElementRecord[];
}

export interface LayerRecord {
  id: string;
  name: string;
  elements: ElementRecord[];
}

export interface DiscussionEntry {
  timestamp: number;
  author: string;
  text: string;
}

export interface DiscussionRecord {
  id: IntegerId;
  pageId: string;
  title: string;
  positionX: number;
  positionY: number;
  timestamp: number;
  entries: DiscussionEntry[];
  readAt: number;
}

export interface MilestoneRecord {
  revision: number;
  created: string;
  name: string;
  user: { id: number; name: string };
}

export interface PrototypeRecord {
  id: IntegerId;
  name: string;
  lastUser: string;
  lastModification: number;
  /** Kept in the order served, which is not always ascending (api-notes.md). */
  milestones: MilestoneRecord[];
  pages: PageRecord[];
  layers: LayerRecord[];
  discussions: DiscussionRecord[];
  legacyPagesList: boolean;
  /** Element ids are unique across the pages and layers of one prototype. */
  nextElement: number;
}

/** Everything of a prototype but its pages, which a big generated one produces one at a time. */
export type PrototypeHead = Omit<PrototypeRecord, 'pages'>;

/** A prototype with nothing in it yet: the sample data and the store's writes both start here. */
export function newPrototype(id: IntegerId, name: string, lastUser: string, lastModification: number): PrototypeRecord {
  return {
    id,
    name,
    lastUser,
    lastModification,
    milestones: [],
    pages: [],
    layers: [],
    discussions: [],
    legacyPagesList: false,
    nextElement: 1,
  };
}

export type ParentKind = 'page' | 'layer';

export const SYSTEM_USER = { id: 0, name: 'System' } as const;

export function parentKindOf(parentId: string): ParentKind | undefined {
  if (/^page\d+$/.test(parentId)) return 'page';
  if (/^layer\d+$/.test(parentId)) return 'layer';
  return undefined;
}
