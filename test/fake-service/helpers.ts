import type { FakeService } from '../../src/fake-service/index.js';

/** Shared client side of the fake-service tests: plain fetch against the real server. */
export function apiUrl(service: FakeService, path: string, key: string | null = service.keys.readWrite): string {
  const url = new URL(`/rabbit/api/${path}`, service.baseUrl);
  if (key !== null) url.searchParams.set('api_key', key);
  return url.toString();
}

export function get(
  service: FakeService,
  path: string,
  key?: string | null,
  headers?: Record<string, string>,
): Promise<Response> {
  return fetch(apiUrl(service, path, key), headers ? { headers } : {});
}

export async function getJson<T = unknown>(service: FakeService, path: string, key?: string | null): Promise<T> {
  const res = await get(service, path, key);
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  return (await res.json()) as T;
}

export async function send(
  service: FakeService,
  method: string,
  path: string,
  body?: unknown,
  key: string = service.keys.readWrite,
): Promise<Response> {
  const init: RequestInit = { method, headers: { 'content-type': 'application/json' } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  return fetch(apiUrl(service, path, key), init);
}

export interface CrawledBody {
  status: number;
  contentType: string | null;
  body: Buffer;
}

/**
 * Fetches every readable resource the way an exporter would, following lists. Returns bodies by
 * API path (relative to /rabbit/api/).
 */
export async function crawl(
  service: FakeService,
  key: string = service.keys.readOnly,
): Promise<Map<string, CrawledBody>> {
  const out = new Map<string, CrawledBody>();
  const fetchBody = async (path: string): Promise<Buffer> => {
    const res = await get(service, path, key);
    const body = Buffer.from(await res.arrayBuffer());
    out.set(path, { status: res.status, contentType: res.headers.get('content-type'), body });
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    return body;
  };
  const json = async <T>(path: string): Promise<T> => JSON.parse((await fetchBody(path)).toString('utf8')) as T;
  for (const protoId of await json<number[]>('prototypes.json')) {
    const base = `prototypes/${protoId}`;
    await fetchBody(`${base}.json`);
    const pages = await json<string[] | Record<string, string>>(`${base}/pages.json`);
    for (const pageId of Array.isArray(pages) ? pages : Object.keys(pages)) {
      await fetchBody(`${base}/pages/${pageId}.json`);
      await fetchBody(`${base}/pages/${pageId}.html`);
      await fetchBody(`${base}/pages/${pageId}.png`);
      await fetchBody(`${base}/pages/${pageId}/discussions.json`);
      for (const elementId of await json<string[]>(`${base}/pages/${pageId}/elements.json`)) {
        await fetchBody(`${base}/pages/${pageId}/elements/${elementId}.json`);
      }
    }
    for (const layerId of await json<string[]>(`${base}/layers.json`)) {
      await fetchBody(`${base}/layers/${layerId}.json`);
      for (const elementId of await json<string[]>(`${base}/layers/${layerId}/elements.json`)) {
        await fetchBody(`${base}/layers/${layerId}/elements/${elementId}.json`);
      }
    }
    for (const discussionId of await json<number[]>(`${base}/discussions.json`)) {
      await fetchBody(`${base}/discussions/${discussionId}.json`);
    }
  }
  return out;
}
