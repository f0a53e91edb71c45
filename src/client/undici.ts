import { createRequire } from 'node:module';
import type * as Undici from 'undici';

/**
 * The two dispatchers the export uses, without the rest of undici. The package's index loads all
 * of it on the first import (fetch, WebSocket, the cache stores with node:sqlite, the mock agents,
 * HTTP/2): about 85 ms on these machines, against about 28 ms for the files behind `Pool`,
 * `ProxyAgent` and the request API. So this loads those files and gives the dispatchers their
 * `request` the way the index does (`Object.assign(Dispatcher.prototype, api)`; doing it again when
 * the index is loaded too changes nothing).
 *
 * undici has no export map, but its file layout is not its public interface: package.json pins the
 * exact version, and test/client/undici.test.ts fails if these are not the classes and the request
 * method the index exports.
 */
const load = createRequire(import.meta.url);
const Dispatcher = load('undici/lib/dispatcher/dispatcher.js') as typeof Undici.Dispatcher;
Object.assign(Dispatcher.prototype, load('undici/lib/api/index.js') as object);

export const Pool = load('undici/lib/dispatcher/pool.js') as typeof Undici.Pool;
export const ProxyAgent = load('undici/lib/dispatcher/proxy-agent.js') as typeof Undici.ProxyAgent;
export type Pool = Undici.Pool;
export type ProxyAgent = Undici.ProxyAgent;
