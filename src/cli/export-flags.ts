import { InvalidArgumentError } from 'commander';
import { isValidId } from '../api/ids.js';
import { FORMATS } from '../api/kind-lists.js';
import type { Format } from '../crawl/crawl-account.js';
import type { ExportOptions } from '../export/export-account.js';

/** Flags that choose what an export covers, shared by `export` and `backup`. */
export interface SelectionFlags {
  since?: string;
  prototype?: string[];
  formats?: ReadonlySet<Format>;
}

/**
 * `--formats json,html,png`. json cannot be left out: the JSON lists are what the crawl walks to
 * find pages at all, and an archive without metadata could not be read back or used as --since.
 */
export function parseFormats(value: string): ReadonlySet<Format> {
  const parts = value
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '');
  const unknown = parts.filter((part) => !FORMATS.includes(part as Format));
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      `--formats takes ${FORMATS.slice(0, -1).join(', ')} and ${FORMATS.at(-1)}; not ${unknown.join(', ')}`,
    );
  if (!parts.includes('json')) {
    throw new InvalidArgumentError(
      '--formats must include json: the JSON metadata is what the export walks and what the renderings belong to',
    );
  }
  return new Set(parts as Format[]);
}

/** `--prototype ID`, repeatable; an id of the wrong shape is a usage error, not a request. */
export function collectPrototype(value: string, previous: string[] = []): string[] {
  const id = value.trim();
  if (!isValidId('prototype', id))
    throw new InvalidArgumentError(`--prototype takes a prototype id (digits), not ${JSON.stringify(value)}`);
  return previous.includes(id) ? previous : [...previous, id];
}

export function selectionOf(flags: SelectionFlags): Pick<ExportOptions, 'since' | 'prototypes' | 'formats'> {
  return {
    ...(flags.since !== undefined ? { since: flags.since } : {}),
    ...(flags.prototype !== undefined ? { prototypes: new Set(flags.prototype) } : {}),
    ...(flags.formats !== undefined ? { formats: flags.formats } : {}),
  };
}

/** The selection flags again, for a command line the user can copy (resume hints). */
export function selectionArgs(flags: SelectionFlags): string[] {
  const args: string[] = [];
  if (flags.since !== undefined) args.push('--since', flags.since);
  for (const id of flags.prototype ?? []) args.push('--prototype', id);
  if (flags.formats !== undefined) args.push('--formats', [...flags.formats].join(','));
  return args;
}

export const SELECTION_HELP = {
  prototype: 'export only this prototype id (repeatable)',
  formats:
    'which bodies to keep: json (always), html, png, and the older page views xhtml-sketched, xhtml-plain; e.g. "json" leaves out renderings (default json,html,png)',
  since: 'an earlier archive: unchanged prototypes are copied from it (checked by sha256) instead of fetched',
} as const;
