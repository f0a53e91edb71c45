import { parentPort } from 'node:worker_threads';
import { finishView, prepareView, type PreparedView } from './view-build.js';
import type { ViewReply, ViewRequest } from './view-messages.js';

/**
 * A thread that builds page views (view-build.ts), so parsing, cleaning and checking a page never
 * holds up the loop that drives the crawl's requests. It keeps the pages it has prepared until the
 * caller has resolved their references; the caller bounds how many that can be.
 */
const port = parentPort;
if (port === null) throw new Error('view-worker.js runs as a worker thread');

const prepared = new Map<number, PreparedView>();

port.on('message', (request: ViewRequest) => {
  const reply = (message: ViewReply, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);
  try {
    if (request.op === 'prepare') {
      const view = prepareView(request.body, request.contentType);
      prepared.set(request.id, view);
      reply({ op: 'references', id: request.id, references: view.references });
    } else {
      const view = prepared.get(request.id);
      prepared.delete(request.id);
      if (view === undefined) throw new Error(`no prepared view ${request.id}`);
      const { html, fault } = finishView(view, request.resolved, request.viewPath);
      const bytes = new TextEncoder().encode(html);
      reply({ op: 'view', id: request.id, bytes, ...(fault ? { fault } : {}) }, [bytes.buffer as ArrayBuffer]);
    }
  } catch (error) {
    prepared.delete(request.id);
    reply({ op: 'failed', id: request.id, message: error instanceof Error ? error.message : String(error) });
  }
});
