import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before it
 * collects again. Left to itself V8 picks up to 4x, and a long export allocates fast enough (tens of
 * kilobytes of short-lived objects per request, some of it living across a request's awaits) that
 * the heap settles far above the ~20 MiB actually live. 2x keeps it near the live size:
 * `npm run bench` measured 30k-resource exports at 134-140 MiB peak RSS instead of 152-154,
 * for ~5 % more CPU (1.5x cost ~20 % more CPU for a further ~5 MiB). The setting is read at every
 * full collection, so it may be set once the process runs. A flag given on the command line wins.
 */
const FLAG = '--heap-growing-percent';
const PERCENT = 100;

export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env['NODE_OPTIONS'] ?? ''): boolean {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].some((arg) => arg.replace(/_/g, '-').startsWith(FLAG));
  if (given) return false;
  setFlagsFromString(`${FLAG}=${PERCENT}`);
  return true;
}
