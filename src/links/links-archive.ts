import { RabbitError } from '../core/errors.js';
import { parseEntryPath } from '../api/entry-paths.js';
import { generatedEntryOf, parseGeneratedEntry } from '../api/generated-entries.js';
import { readArchiveManifest } from '../archive/open-archive.js';
import { linkWriter, type LinkFormat } from './link-formats.js';
import { editorRows, notePageFile, servedRow, type LinkRow, type PageTargets } from './link-rules.js';

export interface LinksOptions {
  archive: string;
  format: LinkFormat;
  /** Where the archive's files will be served from (http(s) URL or absolute path); entry names when absent. */
  base?: string;
  /** Receives the output piece by piece; a returned promise is awaited (backpressure). */
  write: (chunk: string) => void | Promise<void>;
}

export interface LinksSummary {
  rows: number;
  byKind: Record<string, number>;
}

/**
 * Maps every URL of the service that an archived file answers to that file, streaming the
 * manifest twice: once for what must be known first (the service's base URL, each prototype's
 * current revision, which prototypes have an overview page), then entry by entry. Only one
 * prototype's page list is held at a time.
 */
export async function listLinks(options: LinksOptions): Promise<LinksSummary> {
  const base = options.base === undefined ? undefined : checkedBase(options.base);
  const revisions = new Map<string, string>();
  const overviews = new Set<string>();
  const head = await readArchiveManifest(options.archive, {
    prototype(id, record) {
      revisions.set(id, String(record.revision));
    },
    file(entry, owner) {
      const generated = owner === null ? parseGeneratedEntry(entry.path) : undefined;
      if (generated?.name === 'overview') overviews.add(generated.prototype as string);
    },
  });

  const writer = linkWriter(options.format, { baseUrl: head.source.baseUrl, base });
  const summary: LinksSummary = { rows: 0, byKind: {} };
  let pages = new Map<string, PageTargets>();
  let prototypeEntry: string | undefined;
  const emit = async (row: LinkRow): Promise<void> => {
    summary.rows++;
    summary.byKind[row.kind] = (summary.byKind[row.kind] ?? 0) + 1;
    const text = writer.row(row);
    if (text !== '') await options.write(text);
  };

  await options.write(writer.start());
  await readArchiveManifest(options.archive, {
    async file(entry, owner) {
      if (owner !== null && owner.revision !== revisions.get(owner.prototype)) return;
      const parsed = parseEntryPath(entry.path);
      if (owner !== null) {
        notePageFile(entry, pages, parsed);
        if (parsed?.kind === 'prototype') prototypeEntry = entry.path;
      }
      const row = servedRow(entry, parsed);
      if (row !== undefined) await emit(row);
    },
    async prototype(id) {
      const overview = overviews.has(id) ? generatedEntryOf('overview', { prototype: id }) : undefined;
      for (const row of editorRows(id, prototypeEntry, overview, pages)) await emit(row);
      const closing = writer.endPrototype();
      if (closing !== '') await options.write(closing);
      pages = new Map();
      prototypeEntry = undefined;
    },
  });
  await options.write(writer.end());
  return summary;
}

/** Rules and scripts take the base as text: one that would break them is refused up front. */
function checkedBase(base: string): string {
  if (!/^(https?:\/\/[^\s"'<>\\$]+|\/[^\s"'<>\\$]*)$/.test(base)) {
    throw new RabbitError(
      'USAGE',
      `--base must be an http(s) URL or an absolute path without spaces, quotes or "$": ${JSON.stringify(base)}`,
    );
  }
  return base;
}
