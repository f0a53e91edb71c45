import { RabbitError } from '../../core/errors.js';
import type { ArchiveFormat } from './archive-format.js';
import { bagit } from './bagit.js';
import type { DocumentFormat } from './document-format.js';
import { drawio } from './drawio.js';
import { excalidraw } from './excalidraw.js';
import { pdf } from './pdf.js';
import { svg } from './svg.js';
import { wacz } from './wacz.js';

/** A document per prototype, or one package of the whole archive (archive-format.ts). */
export type OutputFormat = DocumentFormat | ArchiveFormat;

/** Every output of `convert --to`, in the order `--help` lists them; the first is the default. */
export const FORMATS: readonly OutputFormat[] = [drawio, pdf, svg, excalidraw, wacz, bagit];

export const DEFAULT_FORMAT = drawio.name;

export function formatNames(): string[] {
  return FORMATS.map((format) => format.name);
}

export function formatNamed(name: string): OutputFormat {
  const format = FORMATS.find((candidate) => candidate.name === name);
  if (format === undefined) {
    throw new RabbitError(
      'USAGE',
      `convert writes no format ${JSON.stringify(name)} (it writes ${formatNames().join(', ')})`,
    );
  }
  return format;
}
