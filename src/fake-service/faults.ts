import { RabbitError } from '../core/errors.js';
import type { Rng } from './prng.js';
import { createRng } from './prng.js';

/**
 * Which requests get a fault. Faults are scripted by path (exact path, optionally only the first
 * N times) or drawn at a rate from a seeded generator, so a failing run can be replayed.
 */
export type FaultKind =
  | '429'
  | '500'
  | '502'
  | '503'
  | '504'
  | 'reset'
  | 'truncate'
  | 'slow-body'
  | 'malformed-json'
  | 'bad-ids'
  | 'endless-body'
  | 'trickle'
  | '403'
  | '404'
  | 'corrupt-coding'
  | 'coding-bomb'
  | 'unknown-coding'
  | 'bom'
  | 'empty-body';

export const FAULT_KINDS: readonly FaultKind[] = [
  '429',
  '500',
  '502',
  '503',
  '504',
  'reset',
  'truncate',
  'slow-body',
  'malformed-json',
  'bad-ids',
  'endless-body',
  'trickle',
  '403',
  '404',
  'corrupt-coding',
  'coding-bomb',
  'unknown-coding',
  'bom',
  'empty-body',
];

/** The faults a retrying client should get through: the default for `rate`. */
export const TRANSIENT_FAULTS: readonly FaultKind[] = ['429', '500', '502', '503', '504', 'reset', 'truncate'];

export interface PathFault {
  /** Exact path without query, e.g. /rabbit/api/prototypes/3.json. */
  path: string;
  kind: FaultKind;
  /** Only the first `times` requests of the path; every request when absent. */
  times?: number;
}

export interface FaultOptions {
  /** Fraction of API requests (0..1) that get a random kind from `kinds`. */
  rate?: number;
  seed?: number;
  kinds?: FaultKind[];
  paths?: PathFault[];
  /** Total pauses of a 'slow-body' response, spread over 10 chunks. Default 3000. */
  slowBodyMs?: number;
  /** Pause between the single bytes of a 'trickle' body, which never ends. Default 2000. */
  trickleMs?: number;
}

export const DEFAULT_SLOW_BODY_MS = 3000;
export const DEFAULT_TRICKLE_MS = 2000;

export class FaultPlan {
  private readonly rng: Rng;
  private readonly used: number[];

  constructor(private readonly options: FaultOptions = {}) {
    this.rng = createRng(options.seed ?? 1, 'faults');
    this.used = (options.paths ?? []).map(() => 0);
  }

  get slowBodyMs(): number {
    return this.options.slowBodyMs ?? DEFAULT_SLOW_BODY_MS;
  }

  get trickleMs(): number {
    return this.options.trickleMs ?? DEFAULT_TRICKLE_MS;
  }

  /** Path faults reach every path; rate faults only API paths, never static assets. */
  pick(pathname: string, api: boolean): FaultKind | undefined {
    const paths = this.options.paths ?? [];
    for (let i = 0; i < paths.length; i++) {
      const fault = paths[i]!;
      if (fault.path !== pathname) continue;
      if (fault.times !== undefined && (this.used[i] ?? 0) >= fault.times) continue;
      this.used[i] = (this.used[i] ?? 0) + 1;
      return fault.kind;
    }
    const rate = this.options.rate ?? 0;
    if (!api || rate <= 0) return undefined;
    if (this.rng.next() >= rate) return undefined;
    const kinds = this.options.kinds?.length ? this.options.kinds : TRANSIENT_FAULTS;
    return this.rng.pick(kinds);
  }
}

/**
 * Parses the `serve --faults` text. Clauses are separated by `,` or `;`:
 *
 *   rate=<0..1>                  fraction of API requests that fail
 *   seed=<integer>               seed of the draw (default 1)
 *   kinds=<kind>+<kind>...       kinds drawn at `rate` (default 429+500+502+503+504+reset+truncate)
 *   path=<path>:<kind>[*<n>]     always (or the first n times) fail this exact path, repeatable
 *   slow-body-ms=<integer>       total pause of a slow-body response
 *   trickle-ms=<integer>         pause between the bytes of a trickle body (default 2000)
 *
 * e.g. "rate=0.15,seed=7,kinds=429+503+reset+truncate" or
 *      "path=/rabbit/api/prototypes/3/pages/page0001.png:500*2;path=/rabbit/api/prototypes.json:reset".
 * Kinds: 429 500 502 503 504 403 404 reset truncate slow-body malformed-json bad-ids endless-body
 * trickle (a 200 whose body sends one byte every trickle-ms and never ends: never idle, never done)
 * corrupt-coding (a gzip body whose CRC is wrong) coding-bomb (~1 MiB of gzip that inflates to 1 GiB)
 * unknown-coding (the body sent as it is, declared in the old `compress` coding nobody decodes)
 * bom (a UTF-8 byte-order mark before a JSON body) empty-body (a 200 with its headers and no body).
 */
export function parseFaultSpec(spec: string): FaultOptions {
  const options: FaultOptions = {};
  for (const clause of spec
    .split(/[,;]/)
    .map((c) => c.trim())
    .filter(Boolean)) {
    const eq = clause.indexOf('=');
    const name = eq < 0 ? clause : clause.slice(0, eq).trim();
    const value = eq < 0 ? '' : clause.slice(eq + 1).trim();
    switch (name) {
      case 'rate':
        options.rate = number(value, clause, 0, 1);
        break;
      case 'seed':
        options.seed = integer(value, clause);
        break;
      case 'slow-body-ms':
        options.slowBodyMs = integer(value, clause);
        break;
      case 'trickle-ms':
        options.trickleMs = integer(value, clause);
        break;
      case 'kinds':
        options.kinds = value.split('+').map((kind) => faultKind(kind.trim(), clause));
        break;
      case 'path':
        (options.paths ??= []).push(pathFault(value, clause));
        break;
      default:
        throw usage(clause, 'expected rate=, seed=, kinds=, path=, slow-body-ms= or trickle-ms=');
    }
  }
  return options;
}

function pathFault(value: string, clause: string): PathFault {
  const colon = value.lastIndexOf(':');
  if (colon <= 0 || !value.startsWith('/')) throw usage(clause, 'expected path=/rabbit/...:<kind>[*<n>]');
  const [kind = '', times] = value.slice(colon + 1).split('*');
  const fault: PathFault = { path: value.slice(0, colon), kind: faultKind(kind, clause) };
  if (times !== undefined) fault.times = integer(times, clause);
  return fault;
}

function faultKind(kind: string, clause: string): FaultKind {
  if ((FAULT_KINDS as readonly string[]).includes(kind)) return kind as FaultKind;
  throw usage(clause, `unknown fault kind ${JSON.stringify(kind)}`);
}

function number(value: string, clause: string, min: number, max: number): number {
  const n = Number(value);
  if (value === '' || !Number.isFinite(n) || n < min || n > max)
    throw usage(clause, `expected a number in ${min}..${max}`);
  return n;
}

function integer(value: string, clause: string): number {
  if (!/^\d+$/.test(value)) throw usage(clause, 'expected a non-negative integer');
  return Number(value);
}

function usage(clause: string, why: string): RabbitError {
  return new RabbitError('USAGE', `bad fault clause ${JSON.stringify(clause)}: ${why}`);
}
