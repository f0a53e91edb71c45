import { generatedEntryOf } from '../api/generated-entries.js';
import type { Milestone } from '../api/revision.js';
import type { FileEntry } from '../storage/file-entry.js';

// Defined below the manifest: a milestone where the service's answer is parsed, a file entry where
// storage records a body (the journal keeps the same members). The manifest lists both as they are.
export type { FileEntry, Milestone };

/**
 * The archive's `manifest.json`. Its JSON Schema is `schema/manifest.schema.json`; keep both in step
 * and bump FORMAT_VERSION on any change that an older reader would misread.
 */
export const FORMAT_VERSION = 1;
export const MANIFEST_PATH = generatedEntryOf('manifest');

/** A reference in an archived page or stylesheet to another host: never fetched, left as written. */
export interface ForeignReference {
  url: string;
  /** Archive paths of the pages and stylesheets that reference it. */
  referencedBy: string[];
}

/**
 * Resources the service does not offer (404 for an older page view): not errors, so the archive
 * stays complete; counted by kind, with the first sources as examples.
 */
export interface NotOffered {
  /** e.g. `xhtml-sketched`. */
  kind: string;
  status: number;
  count: number;
  /** The first NOT_OFFERED_EXAMPLES sources, query included (never a key). */
  examples: string[];
}

export const NOT_OFFERED_EXAMPLES = 20;

/** The `source` of generated files. */
export const GENERATED_SOURCE = 'generated';

export interface ManifestError {
  /** API path (or archive path for local failures) the error belongs to. */
  source: string;
  status?: number;
  /** Stable error code (see src/core/errors.ts). */
  code?: string;
  /** The offending id for rejected ids. */
  id?: string;
  message: string;
  /** How many attempts were made before giving up. */
  attempts?: number;
}

export interface PrototypeRevision {
  /** The milestone object as served for this revision, or null when the prototype had none. */
  milestone: Milestone | null;
  files: FileEntry[];
}

export interface PrototypeOrigin {
  /** `fetched` from the service, or `reused` from an earlier archive (export --since). */
  mode: 'fetched' | 'reused';
  /** File name of the archive the prototype was reused from. */
  archive?: string;
}

export interface PrototypeRecord {
  name: string | null;
  lastModification: number | null;
  lastUser?: string | null;
  revision: number;
  /** True when every resource of this prototype was archived. */
  complete: boolean;
  origin?: PrototypeOrigin;
  revisions: Record<string, PrototypeRevision>;
}

export interface Manifest {
  formatVersion: typeof FORMAT_VERSION;
  tool: { name: string; version: string };
  source: { baseUrl: string };
  startedAt: string;
  finishedAt: string;
  complete: boolean;
  prototypes: Record<string, PrototypeRecord>;
  /** Entries outside any prototype, such as prototypes.json. */
  files: FileEntry[];
  errors: ManifestError[];
  /** References of archived pages to other hosts, when there are any. */
  foreignReferences?: ForeignReference[];
  /** What the service does not offer, when there is any (older page views answered 404). */
  notOffered?: NotOffered[];
  /** Counts for humans and for `ls`; derived from the rest. */
  stats?: RunStats;
}

/** What a run counts as it goes, kept in the manifest's `stats`. */
export interface RunStats {
  requests: number;
  retries: number;
  bytes: number;
  files: number;
  /** Page views that failed their final check and show the page's text instead; absent when none did. */
  viewsReplaced?: number;
}

/** Every file entry of a manifest, prototype entries first in manifest order. */
export function allFileEntries(manifest: Manifest): FileEntry[] {
  const out: FileEntry[] = [...manifest.files];
  for (const record of Object.values(manifest.prototypes)) {
    for (const revision of Object.values(record.revisions)) out.push(...revision.files);
  }
  return out;
}
