import type { FileEntry, ForeignReference, Manifest, ManifestError, Milestone, PrototypeOrigin, PrototypeRecord } from './types.js';
import { FORMAT_VERSION, MANIFEST_PATH } from './types.js';
import { API_PREFIX } from '../archive/paths.js';

/** A file entry and where its bytes wait on disk until the zip is written. */
export interface StoredFile extends FileEntry {
  file: string;
  /** Set when the body is `size` bytes at this offset of the spool's pack file. */
  offset?: number;
}

interface PrototypeState {
  id: string;
  name: string | null;
  lastModification: number | null;
  lastUser: string | null;
  revision: number;
  milestone: Milestone | null;
  origin: PrototypeOrigin;
  files: StoredFile[];
  /** Files downloaded by this run (or an interrupted run it resumes), metadata aside. */
  downloaded: number;
  /** Archives that files were copied from (export --since). */
  reusedFrom: Set<string>;
}

/**
 * What the run has archived so far: metadata only (the bodies are on disk), so it grows with the
 * number of resources, not with their size.
 */
export class ArchiveModel {
  readonly topFiles: StoredFile[] = [];
  readonly errors: ManifestError[] = [];
  /** References of archived pages to other hosts (offline viewer, src/assets). */
  readonly foreignReferences: ForeignReference[] = [];
  private readonly prototypes = new Map<string, PrototypeState>();
  private readonly paths = new Set<string>();

  /** `onAdd` hears of every file the moment it is accepted (the zip is written as the crawl goes). */
  constructor(private readonly onAdd: (file: StoredFile) => void = () => undefined) {}

  addPrototype(state: Omit<PrototypeState, 'files' | 'downloaded' | 'reusedFrom'>): void {
    this.prototypes.set(state.id, { ...state, files: [], downloaded: 0, reusedFrom: new Set() });
  }

  /** Notes where a prototype's file came from: an earlier archive's name, or undefined if downloaded. */
  noteOrigin(prototypeId: string, path: string, archive: string | undefined): void {
    const state = this.prototypes.get(prototypeId);
    if (!state || path.endsWith('/prototype.json')) return;
    if (archive === undefined) state.downloaded++;
    else state.reusedFrom.add(archive);
  }

  hasPrototype(id: string): boolean {
    return this.prototypes.has(id);
  }

  /** Adds a file; a path already archived (the same resource listed twice) is kept once. */
  addFile(prototypeId: string | undefined, file: StoredFile): void {
    if (this.paths.has(file.path)) return;
    this.paths.add(file.path);
    this.onAdd(file);
    if (prototypeId === undefined) {
      this.topFiles.push(file);
      return;
    }
    const state = this.prototypes.get(prototypeId);
    if (!state) throw new Error(`internal: file for unknown prototype ${prototypeId}`);
    state.files.push(file);
  }

  addError(error: ManifestError): void {
    this.errors.push(error);
  }

  get fileCount(): number {
    return this.paths.size;
  }

  /** Every stored file, in the order they go into the zip: top-level first, then by path. */
  allFiles(): StoredFile[] {
    const files = [...this.topFiles];
    for (const id of sortedIds([...this.prototypes.keys()])) {
      files.push(...(this.prototypes.get(id) as PrototypeState).files);
    }
    return files.sort(byZipOrder);
  }

  toManifest(meta: {
    toolVersion: string;
    baseUrl: string;
    startedAt: string;
    finishedAt: string;
    stats: NonNullable<Manifest['stats']>;
  }): Manifest {
    const prototypes: Record<string, PrototypeRecord> = {};
    for (const id of sortedIds([...this.prototypes.keys()])) {
      const state = this.prototypes.get(id) as PrototypeState;
      const errorPrefix = `${API_PREFIX}prototypes/${id}`;
      const failed = this.errors.some((e) => e.source === `${errorPrefix}.json` || e.source.startsWith(`${errorPrefix}/`));
      prototypes[id] = {
        name: state.name,
        lastModification: state.lastModification,
        lastUser: state.lastUser,
        revision: state.revision,
        complete: !failed,
        origin: originOf(state),
        revisions: {
          [String(state.revision)]: {
            milestone: state.milestone,
            files: [...state.files].sort(byZipOrder).map(entryOf),
          },
        },
      };
    }
    return {
      formatVersion: FORMAT_VERSION,
      tool: { name: 'rabbit-export', version: meta.toolVersion },
      source: { baseUrl: meta.baseUrl },
      startedAt: meta.startedAt,
      finishedAt: meta.finishedAt,
      complete: this.errors.length === 0,
      prototypes,
      files: [...this.topFiles].sort(byZipOrder).map(entryOf),
      errors: [...this.errors].sort((a, b) => compareStrings(a.source, b.source)),
      ...(this.foreignReferences.length > 0 ? { foreignReferences: this.foreignReferences } : {}),
      stats: meta.stats,
    };
  }
}

/** A prototype is "reused" when everything but its metadata came from one earlier archive. */
function originOf(state: PrototypeState): PrototypeOrigin {
  if (state.downloaded === 0 && state.reusedFrom.size > 0) {
    return { mode: 'reused', archive: [...state.reusedFrom].sort().join(', ') };
  }
  return state.origin;
}

export function entryOf(file: StoredFile): FileEntry {
  return {
    path: file.path,
    source: file.source,
    sha256: file.sha256,
    size: file.size,
    contentType: file.contentType,
    lastModified: file.lastModified,
    ...(file.generatedFrom !== undefined ? { generatedFrom: file.generatedFrom } : {}),
  };
}

/** Numeric-aware id order, so prototype 9 comes before 10 and page0001 before page7830. */
export function sortedIds(ids: string[]): string[] {
  return ids.sort(compareStrings);
}

const collator = new Intl.Collator('en', { numeric: true });

function compareStrings(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}

function byZipOrder(a: FileEntry, b: FileEntry): number {
  if (a.path === MANIFEST_PATH) return -1;
  if (b.path === MANIFEST_PATH) return 1;
  return compareStrings(a.path, b.path);
}
