import { parseJson } from '../api/parse.js';
import { currentRevision } from '../api/revision.js';

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
