import { EventEmitter } from 'node:events';

/** What undici is handed as a request's signal: an EventEmitter with an AbortSignal's two fields. */
export class AbortRelay extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
}

const relays = new WeakMap<AbortSignal, AbortRelay>();

/**
 * The one relay of `signal`'s abort, made the first time it is asked for: undici takes an
 * EventEmitter as well as an AbortSignal, and every request in flight listens on it.
 *
 * Why not the AbortSignal itself: its listeners are nodes of a linked list, and a node removed keeps
 * pointing at its neighbours (Node's `Listener.remove` in event_target.js). A node that has been
 * promoted to the old generation (its request outlived a young collection or two) and is then
 * removed keeps the next request's node, and through it that request's handler, body and buffers,
 * alive through every young collection until the next full one; those are promoted in turn, and so
 * on down the chain. An EventEmitter keeps its listeners in an array that lets a removed one go,
 * so with the relay far less is promoted and full collections are fewer (docs/design.md).
 */
export function abortRelay(signal: AbortSignal): AbortRelay {
  const known = relays.get(signal);
  if (known) return known;
  const made = new AbortRelay();
  // One listener per request in flight: as many as the crawl's concurrency, and more waiting.
  made.setMaxListeners(0);
  relays.set(signal, made);
  const relayAbort = (): void => {
    made.aborted = true;
    made.reason = signal.reason;
    made.emit('abort');
  };
  if (signal.aborted) relayAbort();
  else signal.addEventListener('abort', relayAbort, { once: true });
  return made;
}
