import type { FaultKind } from './faults.js';
import type { Payload, Reply } from './payload.js';
import { bufferPayload, errorReply, JSON_TYPE } from './payload.js';

/**
 * How each fault changes a reply. Faults that concern the connection rather than the content
 * ('reset', 'truncate', 'slow-body') are carried out by the sender.
 */
export const ENDLESS_LENGTH = 4 * 1024 ** 3;

const STATUS_TEXT: Record<string, [string, string]> = {
  '403': ['forbidden', 'access denied'],
  '404': ['not_found', 'no such resource'],
  '429': ['rate_limited', 'too many requests'],
  '500': ['internal_error', 'internal server error'],
  '502': ['bad_gateway', 'upstream did not answer'],
  '503': ['unavailable', 'service temporarily unavailable'],
  '504': ['gateway_timeout', 'upstream timed out'],
};

export function isStatusFault(kind: FaultKind): boolean {
  return kind in STATUS_TEXT;
}

/**
 * Retry-After is kept to a second so tests stay fast. Every other one is an HTTP date, the form
 * clients most often get wrong; it uses the service's clock (the wall clock unless a test fakes
 * it) because that is what a client compares to.
 */
export function statusFaultReply(kind: FaultKind, sequence: number, now: number): Reply {
  const [error, message] = STATUS_TEXT[kind] ?? ['error', 'injected fault'];
  const headers: Record<string, string> = {};
  if (kind === '503') headers['retry-after'] = '1';
  if (kind === '429') headers['retry-after'] = sequence % 2 === 0 ? '1' : new Date(now + 1000).toUTCString();
  return errorReply(Number(kind), error, message, headers);
}

/** 200 with a JSON type and a body no JSON parser accepts. */
export function malformedJsonReply(reply: Reply): Reply {
  const original = reply.status === 200 && isJson(reply) ? reply.payload?.bytes?.toString('utf8') : undefined;
  // Dropping the closing bracket and adding ",]" leaves a trailing comma, invalid in any JSON.
  const text = original === undefined ? '{"id": 3, "versions": {"milestones": [' : `${original.slice(0, -1)},]`;
  return {
    status: 200,
    headers: { ...reply.headers, 'content-type': JSON_TYPE },
    payload: bufferPayload(Buffer.from(text)),
  };
}

/** A JSON body after a UTF-8 byte-order mark, as Windows tools write it; undefined for any other reply. */
export function bomReply(reply: Reply): Reply | undefined {
  const bytes = reply.status === 200 && isJson(reply) ? reply.payload?.bytes : undefined;
  if (bytes === undefined) return undefined;
  return { ...reply, payload: bufferPayload(Buffer.concat([UTF8_BOM, bytes])) };
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** A 200 with the resource's headers (its type, its date) and not one byte of it. */
export function emptyBodyReply(reply: Reply): Reply | undefined {
  if (reply.status !== 200) return undefined;
  return { ...reply, payload: bufferPayload(Buffer.alloc(0)) };
}

const HOSTILE_STRINGS = ['../../x', 'element1/../../y', 'page1/../../../etc', '/etc/passwd', 'page1\\..\\..\\z'];
const HOSTILE_NUMBERS = [-1, 1.5, 1e21];

/**
 * Hostile ids mixed into a JSON list (or the legacy pages object, or a page's layers), next to
 * the real ones. Undefined when the reply holds nothing an id could be smuggled into.
 */
export function badIdsReply(reply: Reply): Reply | undefined {
  const bytes = reply.status === 200 && isJson(reply) ? reply.payload?.bytes : undefined;
  if (bytes === undefined) return undefined;
  const value: unknown = JSON.parse(bytes.toString('utf8'));
  let poisoned: unknown;
  if (Array.isArray(value)) {
    const stringIds = value.length === 0 || typeof value[0] === 'string';
    // A number where a string id belongs, and strings where integer ids belong.
    const extra = stringIds ? [...HOSTILE_STRINGS, 12345, null] : [...HOSTILE_NUMBERS, '../../x', '3/../../etc'];
    poisoned = [extra[0], ...value, ...extra.slice(1)];
  } else if (isRecord(value) && Array.isArray(value.layers)) {
    poisoned = { ...value, layers: [...value.layers, ...HOSTILE_STRINGS, 7] };
  } else if (isRecord(value) && Object.keys(value).every((key) => key.startsWith('page'))) {
    poisoned = { ...value, ...Object.fromEntries(HOSTILE_STRINGS.map((id) => [id, 'evil'])), page99: 42 };
  } else if (isRecord(value) && 'id' in value) {
    poisoned = { ...value, id: '../../x' };
  } else {
    return undefined;
  }
  return { ...reply, payload: bufferPayload(Buffer.from(JSON.stringify(poisoned))) };
}

/**
 * A body that never ends. JSON paths stream chunked `[0,0,0,...` (no length to check up front);
 * other paths announce 4 GiB. The sender stops when the client goes away.
 */
export function endlessReply(reply: Reply, pathname: string): Reply {
  const chunked = pathname.endsWith('.json');
  const filler = Buffer.alloc(64 * 1024, chunked ? '0,' : 'rabbit ');
  const payload: Payload = {
    size: chunked ? undefined : ENDLESS_LENGTH,
    *chunks() {
      if (chunked) yield Buffer.from('[');
      for (;;) yield filler;
    },
  };
  const contentType = reply.status === 200 ? (reply.headers['content-type'] ?? JSON_TYPE) : 'application/octet-stream';
  return { status: 200, headers: { 'content-type': chunked ? JSON_TYPE : contentType }, payload };
}

function isJson(reply: Reply): boolean {
  return (reply.headers['content-type'] ?? '').startsWith('application/json');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
