import { API_PREFIX } from '../archive/paths.js';
import { readArchiveManifest } from '../manifest/read-manifest.js';
import type { FileEntry, Manifest } from '../manifest/types.js';

export interface ListRow {
  id: string;
  /** Null when the service sent no name, or the prototype is known only from its errors. */
  name: string | null;
  /** The archived revision; null when nothing of the prototype was archived. */
  revision: number | null;
  pages: number;
  layers: number;
  elements: number;
  discussions: number;
  /** Entries of the archived revision (every resource and generated file) and their bytes. */
  resources: number;
  bytes: number;
  /** Manifest errors recorded against this prototype. */
  errors: number;
  complete: boolean;
}

/** A prototype's own archive files, relative to `prototypes/{id}/r{rev}/`, and what they count as. */
const COUNTED: Array<{ pattern: RegExp; column: 'pages' | 'layers' | 'elements' | 'discussions' }> = [
  { pattern: /^pages\/[^/]+\.json$/, column: 'pages' },
  { pattern: /^layers\/[^/]+\.json$/, column: 'layers' },
  { pattern: /^(?:pages|layers)\/[^/]+\/elements\/[^/]+\.json$/, column: 'elements' },
  { pattern: /^discussions\/[^/]+\.json$/, column: 'discussions' },
];

const byId = new Intl.Collator('en', { numeric: true }).compare;

/**
 * One row per prototype, from manifest.json alone: listing a multi-gigabyte archive reads a few
 * kilobytes of it. Prototypes that only appear in errors (their metadata never arrived) are listed
 * too, so `ls` never hides a prototype the export knew about.
 */
export async function listArchive(path: string): Promise<ListRow[]> {
  const manifest = await readArchiveManifest(path);
  const errorsById = countErrors(manifest);
  const rows: ListRow[] = [];
  for (const [id, record] of Object.entries(manifest.prototypes)) {
    const files = record.revisions[String(record.revision)]?.files ?? [];
    rows.push({
      id,
      name: record.name,
      revision: record.revision,
      ...count(files, `prototypes/${id}/r${record.revision}/`),
      errors: errorsById.get(id) ?? 0,
      complete: record.complete,
    });
  }
  for (const [id, errors] of errorsById) {
    if (Object.hasOwn(manifest.prototypes, id)) continue;
    rows.push({ id, name: null, revision: null, pages: 0, layers: 0, elements: 0, discussions: 0, resources: 0, bytes: 0, errors, complete: false });
  }
  return rows.sort((a, b) => byId(a.id, b.id));
}

function count(files: FileEntry[], prefix: string): Pick<ListRow, 'pages' | 'layers' | 'elements' | 'discussions' | 'resources' | 'bytes'> {
  const counts = { pages: 0, layers: 0, elements: 0, discussions: 0, resources: 0, bytes: 0 };
  const seen = new Set<string>();
  for (const file of files) {
    if (!file.path.startsWith(prefix) || seen.has(file.path)) continue;
    seen.add(file.path);
    counts.resources += 1;
    counts.bytes += file.size;
    const rest = file.path.slice(prefix.length);
    const kind = COUNTED.find(({ pattern }) => pattern.test(rest));
    if (kind) counts[kind.column] += 1;
  }
  return counts;
}

/** Errors by prototype id, matched on the API path or, for local failures, the archive path. */
function countErrors(manifest: Manifest): Map<string, number> {
  const counts = new Map<string, number>();
  const api = new RegExp(`^${API_PREFIX.replace(/[/]/g, '\\/')}prototypes\\/(\\d+)(?:\\.json$|\\/)`);
  for (const error of manifest.errors) {
    const id = api.exec(error.source)?.[1] ?? /^prototypes\/(\d+)\//.exec(error.source)?.[1];
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}
