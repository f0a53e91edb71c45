import { describe } from '../api/ids.js';
import { isPlainObject } from '../api/parse.js';

/**
 * What an element body must look like before any of it goes into a URL or a request body, and
 * how two bodies are compared. Archived bodies were checked by the exporter only as far as their
 * ids; an archive may also have been edited by hand or by another tool, so the restore checks
 * every attribute again: names printable and short, values nested shallowly, the whole small.
 */
export const ELEMENT_LIMITS = {
  /** The serialized attributes; a wireframe element is a few hundred bytes. */
  maxBytes: 256 * 1024,
  maxAttributes: 500,
  maxNameLength: 128,
  maxDepth: 32,
} as const;

export type Attributes = Record<string, unknown>;

/** The attributes of a body, `id` excepted, or why they cannot be sent. */
export function checkElementBody(body: unknown, expectedId: string): { attributes: Attributes } | { problem: string } {
  if (!isPlainObject(body)) return { problem: 'the element body is not a JSON object' };
  const measured = bodyProblem(body);
  if (measured !== undefined) return { problem: measured };
  if (body['id'] !== expectedId) return { problem: `the body's id ${describe(body['id'])} is not ${expectedId}` };
  const type = body['type'];
  if (typeof type !== 'string' || type === '' || type.length > ELEMENT_LIMITS.maxNameLength) {
    return { problem: `type ${describe(type)} is not a short non-empty string` };
  }
  const names = Object.keys(body).filter((name) => name !== 'id');
  if (names.length > ELEMENT_LIMITS.maxAttributes)
    return { problem: `${names.length} attributes, more than ${ELEMENT_LIMITS.maxAttributes}` };
  for (const name of names) {
    // __proto__ survives JSON.parse as an own key but not an assignment; nothing real is named so.
    if (
      name === '' ||
      name.length > ELEMENT_LIMITS.maxNameLength ||
      // eslint-disable-next-line no-control-regex
      /[\u0000-\u001f\u007f]/.test(name) ||
      name === '__proto__'
    ) {
      return { problem: `attribute name ${describe(name)} is not a short printable name` };
    }
  }
  return { attributes: Object.fromEntries(names.map((name) => [name, body[name]])) };
}

/** JSON text with object keys sorted: equal values give equal text whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function sameValue(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * Archived attributes whose live value differs or is missing: what an update has to send. Present
 * means an own attribute: `in` would find `constructor` or `toString` on any object.
 */
export function changedAttributes(archived: Attributes, live: Attributes): string[] {
  return Object.keys(archived).filter((name) => !Object.hasOwn(live, name) || !sameValue(archived[name], live[name]));
}

/** Live attributes the archive does not have: an update cannot remove them (service-api.md 4.4 rule 1). */
export function extraAttributes(archived: Attributes, live: Attributes): string[] {
  return Object.keys(live).filter((name) => !Object.hasOwn(archived, name));
}

/**
 * Why a parsed body is too deep or too large to compare or send, or undefined. Walked with a stack
 * of its own, before anything recurses into it or serializes it: JSON.parse reads any depth, but
 * JSON.stringify and every recursive walk overflow the call stack at some thousands of levels, and
 * an archive (or a service) may hand over a hundred thousand. The size is the JSON text's, counted
 * as it goes; the walk stops at the first limit passed.
 */
export function bodyProblem(body: unknown): string | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: body, depth: 0 }];
  let bytes = 0;
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, depth } = item;
    if (depth > ELEMENT_LIMITS.maxDepth)
      return `the element is nested too deeply (more than ${ELEMENT_LIMITS.maxDepth} levels)`;
    if (Array.isArray(value)) {
      bytes += 2 + Math.max(0, value.length - 1);
      for (const child of value) stack.push({ value: child, depth: depth + 1 });
    } else if (isPlainObject(value)) {
      const entries = Object.entries(value);
      bytes += 2 + Math.max(0, entries.length - 1);
      for (const [key, child] of entries) {
        bytes += Buffer.byteLength(JSON.stringify(key)) + 1;
        stack.push({ value: child, depth: depth + 1 });
      }
    } else {
      bytes += Buffer.byteLength(JSON.stringify(value) ?? 'null');
    }
    if (bytes > ELEMENT_LIMITS.maxBytes) return `the element exceeds ${ELEMENT_LIMITS.maxBytes} bytes`;
  }
  return undefined;
}
