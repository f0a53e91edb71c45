import { RabbitError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { sourceOf } from '../api/entry-paths.js';
import { parseJson } from '../api/parse.js';
import { currentRevision } from '../api/revision.js';
import type { LiveAnswer } from './live-client.js';

// What the service's answers say beyond their bodies: the revision a prototype is at now, whether
// two lists name the same ids, and why a check that cannot read the list of prototypes stops.

export const ROOT_LIST = sourceOf('prototype-list', {});

/**
 * The revision a prototype's metadata, as the service serves it now, names (its highest
 * milestone), or null when the body is not JSON with milestones.
 */
export function liveRevisionOf(body: Buffer): number | null {
  try {
    const value = parseJson(body, 'prototype metadata');
    return currentRevision(value).milestone === null ? null : currentRevision(value).revision;
  } catch {
    return null;
  }
}

export function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((id) => set.has(id));
}

export function goneList(source: string): RabbitError {
  return new RabbitError('HTTP_STATUS', `GET ${source} answered 404`, { source, status: 404 });
}

/** The list of prototypes could not be read with a key: nothing can be told new or gone. */
export function rootFailure(answer: LiveAnswer, index: number, keys: readonly string[]): RabbitError {
  const which = keys.length > 1 ? `API key number ${index + 1}` : 'the API key';
  if (answer.type === 'failed') {
    const { error } = answer;
    if (error.status === 401 || error.status === 403 || error.code === 'KEY_REFUSED')
      return new RabbitError(
        'KEY_REFUSED',
        `the service refused ${which} (HTTP ${error.status ?? 401} on ${ROOT_LIST})`,
        {
          source: ROOT_LIST,
          ...(error.status !== undefined ? { status: error.status } : {}),
          cause: error,
        },
      );
    // The failure's context goes along: through a proxy it names the proxy and what it did, which
    // the CLI needs to blame the proxy rather than --base-url (client/network-failure.ts).
    return new RabbitError(error.code, `cannot read the list of prototypes: ${redactSecrets(error.message, keys)}`, {
      source: ROOT_LIST,
      ...(error.method !== undefined ? { method: error.method } : {}),
      ...(error.status !== undefined ? { status: error.status } : {}),
      ...(error.data !== undefined ? { data: error.data } : {}),
      cause: error,
    });
  }
  if (answer.type === 'gone')
    return new RabbitError('API_NOT_FOUND', `there is no Rabbit API here (HTTP ${answer.status} on ${ROOT_LIST})`, {
      source: ROOT_LIST,
      status: answer.status,
    });
  return new RabbitError('DEADLINE', 'the check stopped before the list of prototypes was read', { source: ROOT_LIST });
}
