/**
 * What the reader of an archived prototype (archived-prototype-reader.ts) makes of its entries:
 * each field checked for its type, anything else taken as absent (null), never trusted. Readers
 * add their own defaults (convert names a nameless page by its id; the overview shows it nameless).
 */
export type Json = Record<string, unknown>;

export interface PrototypeMeta {
  name: string | null;
  lastModification: number | null;
  lastUser: string | null;
  /** In revision order, whatever order the service listed them in. */
  milestones: MilestoneRecord[];
}

export interface MilestoneRecord {
  revision: number;
  name: string;
  created: number | null;
  user: string | null;
}

export interface PageRecord {
  id: string;
  name: string | null;
  /** The layers it shows, in its order: checked ids, each once. */
  layerIds: string[];
}

export interface LayerRecord {
  id: string;
  name: string | null;
}

export interface ElementRecord {
  id: string;
  /** Its entry below the revision's folder (`pages/page1/elements/element3.json`): which text is whose. */
  entry: string;
  /** Its JSON exactly as archived. */
  raw: string;
  /** Its JSON, parsed: an object, its fields unchecked, for what a reader takes of it. */
  value: Json;
  /** Its `text`: a string, or a number as the service sometimes sent one; null otherwise. */
  text: string | null;
}

export interface DiscussionRecord {
  id: string;
  raw: string;
  /** A checked page id, or null. */
  pageId: string | null;
  title: string | null;
  x: number | null;
  y: number | null;
  entries: { author: string | null; timestamp: number | null; text: string | null }[];
}

export function asObject(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

export function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function finite(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** A time in milliseconds, as a number or, as the service writes a milestone's, a string of digits. */
export function timeOf(value: unknown): number | null {
  if (typeof value === 'string') return /^\d{1,16}$/.test(value) ? Number(value) : null;
  return finite(value);
}

export function elementTextOf(value: Json): string | null {
  const field = value.text;
  return typeof field === 'string' ? field : typeof field === 'number' ? String(field) : null;
}

export function discussionOf(id: string, raw: string, value: Json, pageId: string | null): DiscussionRecord {
  return {
    id,
    raw,
    pageId,
    title: text(value.title),
    x: finite(value.positionX),
    y: finite(value.positionY),
    entries: (Array.isArray(value.entries) ? value.entries : []).map(asObject).map((entry) => ({
      author: text(entry?.author),
      timestamp: finite(entry?.timestamp),
      text: text(entry?.text),
    })),
  };
}

/**
 * The pixel size a page's rendering declares in its IHDR chunk, which a valid PNG has first: its
 * first 24 bytes are enough.
 */
export function pngSize(png: Buffer): { width: number; height: number } | undefined {
  if (png.length < 24 || png.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  return width > 0 && height > 0 ? { width, height } : undefined;
}

/** The first bytes of a PNG that `pngSize` reads. */
export const PNG_SIZE_BYTES = 24;
