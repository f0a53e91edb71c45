/** Small pure helpers for what the CLI prints. */
export function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Shell-quote an argument for a command line the user can copy (core/shell-quote.ts). */
export { shellQuote, shellWords } from '../core/shell-quote.js';

/** Printable text from untrusted names: terminal-text.ts is the one place that makes it so. */
export { printable } from './terminal-text.js';

/** `512 B`, `59.4 KiB`, `8.5 MiB`, `1.2 GiB`: a size in the unit that reads best. */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** `8.5 MiB stored, 1.9 MiB on the wire (4.5 x smaller)`: the bodies as archived and as they came. */
export function bodiesText(stored: number, wire: number): string {
  const smaller = wire > 0 && wire < stored ? ` (${(stored / wire).toFixed(1)} x smaller)` : '';
  return `${byteSize(stored)} stored, ${byteSize(wire)} on the wire${smaller}`;
}

/** "1 archive", "2 archives": a count and its noun, in the number the count needs. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
