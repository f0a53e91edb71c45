import { setFlagsFromString } from 'node:v8';

/**
 * How V8 sizes its heap for this tool, set once at start-up for every command.
 *
 * An export, and any reader of a big archive, allocates fast and keeps little: tens of kilobytes
 * of short-lived objects per request or per manifest entry, with ~20 MiB actually live. Left to
 * itself V8 then doubles the young generation up to 2 x 16 MiB semi-spaces and keeps it, and lets
 * the old generation grow to up to 4x what survived its last full collection; on an archive of a
 * million entries that was a third of the peak RSS. Measured (`npm run bench`, 2-core machine):
 * - young generation kept at its starting size (1 MiB semi-spaces): `ls` of 1M entries 136 -> 95
 *   MiB, `verify` 151 -> 109, a 30k-resource export 131-138 -> 113-116, for 10-20 % more CPU in
 *   scavenges;
 * - old generation allowed 2x instead of up to 4x: a 30k-resource export 152-154 -> 134-140 MiB
 *   for ~5 % more CPU (1.5x cost ~20 % more for a further ~5 MiB).
 * Both settings are read by V8 each time it sizes the heap, so they take effect when set at run
 * time (`--max-semi-space-size`, by contrast, is fixed when the heap is set up). A setting given
 * on the command line or in NODE_OPTIONS wins.
 */
export function tuneHeap(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env['NODE_OPTIONS'] ?? ''): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map((arg) => arg.replace(/_/g, '-'));
  const set: string[] = [];
  if (!given.some((arg) => /^--(?:max-|min-)?semi-space/.test(arg))) set.push('--semi-space-growth-factor=1');
  if (!given.some((arg) => arg.startsWith('--heap-growing-percent'))) set.push('--heap-growing-percent=100');
  for (const flag of set) setFlagsFromString(flag);
  return set;
}
