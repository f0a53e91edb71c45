/**
 * JSON text for one value, exactly as `JSON.stringify` writes it, for the records written once a
 * resource (the journal's, the manifest's entry lines). Their strings are nearly always printable
 * ASCII with nothing to escape (entry names, API paths, digests, content types, HTTP dates), and
 * pieces joined around them cost clearly less than stringifying the record as an object;
 * anything else goes to `JSON.stringify`.
 *
 * The pieces are joined with `Array.prototype.join`, not a template literal: a template makes a
 * tree of the strings it concatenates, which V8 flattens only when the line is written, so every
 * line waiting in a batch kept its tree alive through young collections (making them longer); a
 * join builds one flat string.
 */
export function jsonString(value: string | null): string {
  if (value === null) return 'null';
  return PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);
}

/** A number as `JSON.stringify` writes it: `null` when it is not finite. */
export function jsonNumber(value: number | null): string {
  return value !== null && Number.isFinite(value) ? String(value) : 'null';
}

/** Printable ASCII but `"` and `\`: the characters JSON.stringify copies as they are. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
