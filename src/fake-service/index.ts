import { createServer, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo, Socket } from 'node:net';
import type { Revocation, ServiceKeys } from './auth.js';
import type { FaultOptions } from './faults.js';
import type { OutageOptions } from './outage.js';
import { OutagePlan } from './outage.js';
import type { CompressionOptions } from './compression.js';
import { FaultPlan } from './faults.js';
import type { ServiceState } from './handler.js';
import { createHandler } from './handler.js';
import type { DatasetOptions } from './model.js';
import { DEFAULT_DATASET } from './model.js';
import { buildStaticAssets } from './static-assets.js';
import type { FakeStats } from './stats.js';
import { createStats } from './stats.js';
import { FakeStore } from './store.js';

/**
 * The bundled fake of the wireframing service: tests, `demo`, `serve` and the benchmarks talk to
 * it over real HTTP. Data, keys and injected faults all follow from seeds, so any run can be
 * repeated byte for byte.
 */
export interface FakeServiceOptions {
  host?: string;
  port?: number;
  /** All data and keys derive from it. Default 1. */
  seed?: number;
  /** Delay before every response's headers. */
  latencyMs?: number;
  dataset?: Partial<DatasetOptions>;
  faults?: FaultOptions;
  /** Count requests per path in `stats.byPath` (default true); `serve` turns it off. */
  countPaths?: boolean;
  /** Wall clock (ms) for writes, Retry-After dates, and how much of the latency answering a request already took. */
  now?: () => number;
  /** How the service waits (latency, slow bodies, trickles); tests pass a fake to count waits instead of timing them. */
  sleep?: (ms: number) => Promise<void>;
  /** When a `down` outage ends (calls `fire` after `ms`, returns a cancel); tests pass one on their own clock. */
  timer?: (ms: number, fire: () => void) => () => void;
  /** Compress answers: only when asked (Accept-Encoding) or always, in chosen codings. */
  compression?: CompressionOptions;
  /** The base URL the service names itself by in bodies when it is reached through a TLS front or proxy. */
  advertisedBaseUrl?: string;
  /**
   * Pages name the logo by an absolute URL on the service's own host, as the live rendering did
   * (default with advertisedBaseUrl, else off). Off, they name it root-relative, and two runs of
   * the same seed serve the same bytes whatever their port: a diff of two exports of the sample
   * finds nothing changed.
   */
  pagesNameHost?: boolean;
  /** The whole service goes away for a while at a chosen request (outage.ts). */
  outage?: OutageOptions;
  /** A key revoked in the middle of a run (auth.ts). */
  revoke?: Revocation;
}

export interface FakeService {
  /** e.g. http://127.0.0.1:41234; the API lives under `${baseUrl}/rabbit/api/`. */
  baseUrl: string;
  keys: ServiceKeys;
  stats: FakeStats;
  store: FakeStore;
  setFaults(faults: FaultOptions | undefined): void;
  setLatency(ms: number): void;
  /** Resolves once a `down` outage is over and the service listens again (at once if none began). */
  back(): Promise<void>;
  setCompression(compression: CompressionOptions | undefined): void;
  /** Revokes a key after so many more requests carrying it; undefined gives it back. */
  setRevocation(revocation: Revocation | undefined): void;
  /** Closes the server and every open connection, endless bodies included. */
  close(): Promise<void>;
}

export async function startFakeService(options: FakeServiceOptions = {}): Promise<FakeService> {
  const state = serviceState(options);
  const { store } = state;
  const server = createServer(createHandler(state));
  // Endless bodies never finish by themselves; keep hold of every socket so close() can end them.
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await listen(server, options.port ?? 0, options.host ?? '127.0.0.1');
  const address = server.address() as AddressInfo;
  const listening = baseUrlOf(address);
  state.baseUrl = options.advertisedBaseUrl ?? listening;
  state.pageOrigin = (options.pagesNameHost ?? options.advertisedBaseUrl !== undefined) ? state.baseUrl : '';
  let closing: Promise<void> | undefined;
  let down: Outage | undefined;
  const timer = options.timer ?? realTimer;
  state.goDown = (ms) => {
    down = goOffline(server, sockets, address, timer, ms);
  };
  return {
    baseUrl: listening,
    keys: store.keyRing.keys,
    stats: state.stats,
    store,
    setFaults(faults) {
      state.faults = new FaultPlan(faults);
    },
    setLatency(ms) {
      state.latencyMs = ms;
    },
    back() {
      return down?.back ?? Promise.resolve();
    },
    setCompression(compression) {
      if (compression) state.compression = compression;
      else delete state.compression;
    },
    setRevocation(revocation) {
      store.keyRing.revoke(revocation);
    },
    close() {
      // Idempotent: afterEach hooks and a test's own finally may both close the same service.
      closing ??= (async () => {
        // Closed while down: it stays down.
        down?.cancel();
        await down?.back;
        await new Promise<void>((resolve, reject) => {
          if (!server.listening) return resolve();
          server.close((error) => (error ? reject(error) : resolve()));
          for (const socket of sockets) socket.destroy();
        });
      })();
      return closing;
    },
  };
}

/** What the handler reads: the store made from the seed, the plans of faults and outages, the clock. */
function serviceState(options: FakeServiceOptions): ServiceState {
  const dataset: DatasetOptions = { ...DEFAULT_DATASET, ...options.dataset };
  const now = options.now ?? Date.now;
  const store = new FakeStore(options.seed ?? 1, dataset, now);
  store.keyRing.revoke(options.revoke);
  return {
    store,
    stats: createStats(options.countPaths ?? true),
    staticAssets: buildStaticAssets(),
    baseUrl: '',
    pageOrigin: '',
    latencyMs: options.latencyMs ?? 0,
    faults: new FaultPlan(options.faults),
    sleep: options.sleep ?? ((ms) => sleep(ms)),
    now,
    ...(options.outage ? { outage: new OutagePlan(options.outage) } : {}),
    ...(options.compression ? { compression: options.compression } : {}),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** An outage under way: `back` settles once the service listens again, or the outage is cancelled. */
interface Outage {
  back: Promise<void>;
  cancel: () => void;
}

/** An outage: off the network (refused connections, reset sockets), then back on the same port after `ms`. */
function goOffline(
  server: Server,
  sockets: ReadonlySet<Socket>,
  address: AddressInfo,
  timer: (ms: number, fire: () => void) => () => void,
  ms: number,
): Outage {
  server.close();
  for (const socket of sockets) socket.destroy();
  let cancel = (): void => undefined;
  const back = new Promise<void>((resolve) => {
    const cancelTimer = timer(ms, () => {
      server.once('error', () => resolve());
      server.listen(address.port, address.address, () => resolve());
    });
    cancel = () => {
      cancelTimer();
      resolve();
    };
  });
  return { back, cancel };
}

function realTimer(ms: number, fire: () => void): () => void {
  const timer = setTimeout(fire, ms);
  return () => clearTimeout(timer);
}

/** A wildcard bind address is not somewhere a client can connect to; use loopback instead. */
function baseUrlOf(address: AddressInfo): string {
  if (address.family === 'IPv6') {
    const host = address.address === '::' ? '::1' : address.address;
    return `http://[${host}]:${address.port}`;
  }
  const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address;
  return `http://${host}:${address.port}`;
}

export { parseCompressSpec, SERVED_CODINGS, BOMB_INFLATED_BYTES } from './compression.js';
export type { CompressionOptions, ServedCoding } from './compression.js';
export { parseFaultSpec, FAULT_KINDS, TRANSIENT_FAULTS } from './faults.js';
export type { FaultKind, FaultOptions, PathFault } from './faults.js';
export { OUTAGE_KINDS, outageKind } from './outage.js';
export type { OutageKind, OutageOptions } from './outage.js';
export type { DatasetOptions } from './model.js';
export type { Revocation, ServiceKeys } from './auth.js';
export type { FakeStats } from './stats.js';
export { writeRequests } from './stats.js';
export { FakeStore } from './store.js';
export { DEFAULT_DATASET } from './model.js';
export { AWKWARD_IDS, BIG_IDS, FIRST_ORDINARY_ID } from './sample-data.js';
export { STATIC_PATHS } from './static-assets.js';
export { FOREIGN_STYLESHEET } from './render-xhtml.js';
export { countExportRequests, datasetForResources, exportPaths, SCALE_SHAPE } from './account-size.js';
