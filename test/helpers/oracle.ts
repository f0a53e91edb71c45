import { STATIC_PATHS } from '../../src/fake-service/index.js';

/**
 * An independent walk of the fake service with the global fetch: what a complete export must
 * contain. Deliberately written apart from src/crawl so a bug there cannot hide here. Each
 * prototype is walked in order, one request at a time, and the prototypes side by side: against
 * a service with latency a walk one request at a time took seconds of waiting.
 */
export async function walkService(baseUrl: string, key: string): Promise<Map<string, Buffer>> {
  const bodies = new Map<string, Buffer>();
  const get = async (source: string): Promise<Buffer> => {
    const response = await fetch(`${baseUrl}${source}?api_key=${encodeURIComponent(key)}`);
    if (response.status !== 200) throw new Error(`oracle: ${source} answered ${response.status}`);
    const body = Buffer.from(await response.arrayBuffer());
    bodies.set(source, body);
    return body;
  };
  const json = async (source: string): Promise<unknown> => JSON.parse((await get(source)).toString('utf8')) as unknown;
  const ids = (value: unknown): string[] =>
    (Array.isArray(value) ? value : Object.keys(value as object)).map((id) => String(id));

  const api = '/rabbit/api';
  const walkPrototype = async (proto: string): Promise<void> => {
    const p = `${api}/prototypes/${proto}`;
    await get(`${p}.json`);
    const discussions = new Set(ids(await json(`${p}/discussions.json`)));
    for (const page of ids(await json(`${p}/pages.json`))) {
      await get(`${p}/pages/${page}.json`);
      await get(`${p}/pages/${page}.html`);
      await get(`${p}/pages/${page}.png`);
      for (const element of ids(await json(`${p}/pages/${page}/elements.json`))) {
        await get(`${p}/pages/${page}/elements/${element}.json`);
      }
      for (const d of ids(await json(`${p}/pages/${page}/discussions.json`))) discussions.add(d);
    }
    for (const layer of ids(await json(`${p}/layers.json`))) {
      await get(`${p}/layers/${layer}.json`);
      for (const element of ids(await json(`${p}/layers/${layer}/elements.json`))) {
        await get(`${p}/layers/${layer}/elements/${element}.json`);
      }
    }
    for (const d of discussions) await get(`${p}/discussions/${d}.json`);
  };
  await Promise.all(ids(await json(`${api}/prototypes.json`)).map(walkPrototype));
  // Page requisites: the sample's XHTML and stylesheet reference every static file the service has.
  for (const path of Object.values(STATIC_PATHS)) {
    const response = await fetch(`${baseUrl}${path}`);
    if (response.status !== 200) throw new Error(`oracle: ${path} answered ${response.status}`);
    bodies.set(path, Buffer.from(await response.arrayBuffer()));
  }
  return bodies;
}

/** Requests of a full export of the default sample: 192 API paths and 5 static assets. */
export const FULL_EXPORT_REQUESTS = 197;

/** Manifest entries that hold a served body (not the viewer's generated files). */
export function servedEntries<T extends { source: string }>(files: T[]): T[] {
  return files.filter((file) => file.source !== 'generated');
}
