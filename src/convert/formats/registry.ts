import { RabbitError } from '../../core/errors.js';
import type { DocumentFormat } from './document-format.js';
import { drawio } from './drawio.js';
import { excalidraw } from './excalidraw.js';
import { pdf } from './pdf.js';
import { svg } from './svg.js';

/** Every output of `convert --to`, in the order `--help` lists them; the first is the default. */
export const FORMATS: readonly DocumentFormat[] = [drawio, pdf, svg, excalidraw];

export const DEFAULT_FORMAT = drawio.name;

export function formatNames(): string[] {
  return FORMATS.map((format) => format.name);
}

export function formatNamed(name: string): DocumentFormat {
  const format = FORMATS.find((candidate) => candidate.name === name);
  if (format === undefined) {
    throw new RabbitError(
      'USAGE',
      `convert writes no format ${JSON.stringify(name)} (it writes ${formatNames().join(', ')})`,
    );
  }
  return format;
}
