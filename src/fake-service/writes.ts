import type { IncomingMessage } from 'node:http';
import type { Access } from './auth.js';
import type { Reply } from './payload.js';
import { errorReply } from './payload.js';
import { representationOf } from './resources.js';
import type { Route } from './routes.js';
import { API_ROOT } from './routes.js';
import type { FakeStore } from './store.js';

/**
 * Element create, update and delete (service-api.md 4.4). The store does the change; this maps
 * bodies and outcomes to HTTP. What the document leaves open is answered the common way: create
 * is 201 with the list, update is 200 with the element.
 */
const MAX_BODY = 1024 * 1024;

type ElementRoute = Extract<Route, { kind: 'elements' | 'element' }>;

export async function answerWrite(
  req: IncomingMessage,
  store: FakeStore,
  baseUrl: string,
  route: ElementRoute,
  access: Access,
): Promise<Reply> {
  const { protoId, parentId } = route;
  if (store.parent(protoId, parentId) === undefined) return notFound();
  if (route.kind === 'elements') {
    const attrs = await readObject(req);
    if (typeof attrs === 'string') return errorReply(attrs === 'too large' ? 413 : 400, 'bad_request', attrs);
    if (typeof attrs.type !== 'string' || attrs.type === '') return errorReply(400, 'bad_request', 'type is required');
    const element = store.addElement(protoId, parentId, attrs);
    const list = representationOf(store, baseUrl, route, access);
    const location = `${baseUrl}${elementPath(protoId, parentId, element.id)}.json`;
    return { status: 201, headers: { 'content-type': list!.contentType, location }, payload: list!.payload };
  }
  if (store.element(protoId, parentId, route.elementId) === undefined) return notFound();
  if (req.method === 'DELETE') {
    store.deleteElement(protoId, parentId, route.elementId);
    return { status: 204, headers: {} };
  }
  const attrs = await readObject(req);
  if (typeof attrs === 'string') return errorReply(attrs === 'too large' ? 413 : 400, 'bad_request', attrs);
  if ('type' in attrs && (typeof attrs.type !== 'string' || attrs.type === '')) {
    return errorReply(400, 'bad_request', 'type must be a non-empty string');
  }
  store.updateElement(protoId, parentId, route.elementId, attrs);
  const element = representationOf(store, baseUrl, route, access)!;
  return { status: 200, headers: { 'content-type': element.contentType }, payload: element.payload };
}

export function elementPath(protoId: string, parentId: string, elementId: string): string {
  const collection = parentId.startsWith('page') ? 'pages' : 'layers';
  return `${API_ROOT}prototypes/${protoId}/${collection}/${parentId}/elements/${elementId}`;
}

/** The JSON object sent, or why it was refused. */
async function readObject(req: IncomingMessage): Promise<Record<string, unknown> | string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) return 'too large';
    chunks.push(chunk);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    return 'the body must be a JSON object';
  } catch {
    return 'the body is not JSON';
  }
}

function notFound(): Reply {
  return errorReply(404, 'not_found', 'no such resource');
}
