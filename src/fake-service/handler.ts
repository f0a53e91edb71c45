import type { IncomingMessage, ServerResponse } from 'node:http';
import { mayRead } from './auth.js';
import {
  badIdsReply,
  bomReply,
  emptyBodyReply,
  endlessReply,
  isStatusFault,
  malformedJsonReply,
  statusFaultReply,
} from './fault-replies.js';
import type { FaultKind, FaultPlan } from './faults.js';
import type { OutagePlan } from './outage.js';
import type { Reply, Representation } from './payload.js';
import { errorReply, httpDate } from './payload.js';
import { representationOf } from './resources.js';
import { codingBombReply, compressReply, corruptCodingReply, type CompressionOptions } from './compression.js';
import { allowedMethods, isApiPath, matchRoute, routePrototype } from './routes.js';
import type { SendMode } from './send-reply.js';
import { sendReply } from './send-reply.js';
import type { FakeStats } from './stats.js';
import { countRequest, countStatus } from './stats.js';
import type { FakeStore } from './store.js';
import { answerWrite } from './writes.js';

/** The parts of a running service that requests read; latency and faults change at run time. */
export interface ServiceState {
  store: FakeStore;
  stats: FakeStats;
  staticAssets: Map<string, Representation>;
  baseUrl: string;
  /** What pages put before an absolute path on the service: the base URL, or '' (root-relative). */
  pageOrigin: string;
  latencyMs: number;
  faults: FaultPlan;
  sleep: (ms: number) => Promise<void>;
  /** Wall-clock ms: dates in replies, and how much of the latency answering already took. */
  now: () => number;
  /** The whole service going away at a chosen request (outage.ts). */
  outage?: OutagePlan;
  /** Stops listening and drops every connection, then listens again on the same port after `ms`. */
  goDown?: (ms: number) => void;
  /** Compressed answers (asked for or always); none sends every body as it is. */
  compression?: CompressionOptions;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'DELETE']);

export function createHandler(state: ServiceState): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(state, req, res).catch(() => {
      // A bug here must not take the test run down with it; the client sees a 500 or a reset.
      if (!res.headersSent) {
        countStatus(state.stats, 500);
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":"internal_error"}');
      } else {
        res.destroy();
      }
    });
  };
}

async function handle(state: ServiceState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://fake.invalid');
  const path = url.pathname;
  res.on('close', countRequest(state.stats, path, req.method ?? 'GET'));
  const outage = state.outage?.onRequest(state.now());
  if (outage?.type === 'go-down') {
    state.goDown?.(outage.forMs);
    req.socket.destroy();
    return;
  }
  if (outage?.type === 'reply') {
    countStatus(state.stats, outage.reply.status);
    await sendReply(req, res, outage.reply, {}, state.sleep);
    return;
  }
  // Latency is the time from the request to the headers: the work of answering happens inside it,
  // not on top of it, so a benchmark's "ideal" (requests x latency / concurrency) is what a
  // server with that latency would allow.
  const arrived = state.now();
  const waitOut = async (): Promise<void> => {
    const left = state.latencyMs - (state.now() - arrived);
    if (left > 0) await state.sleep(left);
  };
  let fault = state.faults.pick(path, isApiPath(path));
  if (fault === 'reset') {
    await waitOut();
    state.stats.faultsInjected++;
    req.socket.destroy();
    return;
  }
  let reply: Reply;
  if (fault !== undefined && isStatusFault(fault)) {
    reply = statusFaultReply(fault, state.stats.faultsInjected, state.now());
  } else {
    reply = await answer(state, req, url);
    const faulted = fault === undefined ? reply : applyContentFault(fault, reply, path);
    if (faulted === undefined) fault = undefined;
    reply = faulted ?? reply;
  }
  reply = await compressReply(state.compression, req.headers['accept-encoding'], reply);
  await waitOut();
  if (fault !== undefined) state.stats.faultsInjected++;
  countStatus(state.stats, reply.status);
  const mode: SendMode = {};
  if (fault === 'truncate') mode.truncate = true;
  if (fault === 'slow-body') mode.slowBodyMs = state.faults.slowBodyMs;
  if (fault === 'trickle') mode.trickleMs = state.faults.trickleMs;
  await sendReply(req, res, reply, mode, state.sleep);
}

/** Undefined when the fault has nothing to act on (bad ids in a PNG), so it is not counted. */
function applyContentFault(fault: FaultKind, reply: Reply, path: string): Reply | undefined {
  switch (fault) {
    case 'malformed-json':
      return malformedJsonReply(reply);
    case 'bad-ids':
      return badIdsReply(reply);
    case 'endless-body':
      return endlessReply(reply, path);
    case 'corrupt-coding':
      return corruptCodingReply(reply);
    case 'coding-bomb':
      return codingBombReply(reply);
    case 'unknown-coding':
      return { ...reply, headers: { ...reply.headers, 'content-encoding': 'compress' } };
    case 'bom':
      return bomReply(reply);
    case 'empty-body':
      return emptyBodyReply(reply);
    default:
      return reply;
  }
}

async function answer(state: ServiceState, req: IncomingMessage, url: URL): Promise<Reply> {
  const method = req.method ?? 'GET';
  const asset = state.staticAssets.get(url.pathname);
  if (asset !== undefined) {
    return method === 'GET' || method === 'HEAD' ? conditional(req, asset) : notAllowed(['GET', 'HEAD']);
  }
  if (!isApiPath(url.pathname)) return errorReply(404, 'not_found', 'no such resource');
  const access = state.store.keyRing.lookup(url.searchParams.get('api_key'));
  if (access === undefined) return errorReply(401, 'unauthorized', 'missing or unknown api_key');
  const route = matchRoute(url.pathname);
  if (route === undefined) return errorReply(404, 'not_found', 'no such resource');
  if (route.kind === 'page' && route.format === 'xhtml') route.mode = url.searchParams.get('mode') ?? '';
  const allowed = allowedMethods(route);
  if (!allowed.includes(method)) return notAllowed(allowed);
  if (WRITE_METHODS.has(method) && !access.write) return forbidden('this key is read-only');
  const protoId = routePrototype(route);
  if (protoId !== undefined && !mayRead(access, protoId)) return forbidden('this key may not read this prototype');
  if (WRITE_METHODS.has(method) && (route.kind === 'elements' || route.kind === 'element')) {
    return answerWrite(req, state.store, state.baseUrl, route, access);
  }
  const found = representationOf(state.store, state.pageOrigin, route, access);
  return found === undefined ? errorReply(404, 'not_found', 'no such resource') : conditional(req, found);
}

/** 304 when the client's copy is as new as ours, compared at the second resolution of HTTP dates. */
function conditional(req: IncomingMessage, found: Representation): Reply {
  const lastModified = httpDate(found.lastModified);
  const since = Date.parse(req.headers['if-modified-since'] ?? '');
  if (!Number.isNaN(since) && Math.floor(found.lastModified / 1000) * 1000 <= since) {
    return { status: 304, headers: { 'last-modified': lastModified } };
  }
  return {
    status: 200,
    headers: { 'content-type': found.contentType, 'last-modified': lastModified },
    payload: found.payload,
  };
}

function forbidden(message: string): Reply {
  return errorReply(403, 'forbidden', message);
}

function notAllowed(allowed: string[]): Reply {
  return errorReply(405, 'method_not_allowed', `use ${allowed.join(', ')}`, { allow: allowed.join(', ') });
}
