/**
 * JSON text for one value, exactly as `JSON.stringify` writes it, for the records written once a
 * resource (the journal's, the manifest's entry lines). Their strings are nearly always printable
 * ASCII with nothing to escape (entry names, API paths, digests, content types, HTTP dates), and
 * pieces joined around them cost about 60 % of stringifying the record as an object (~1.1 against
 * ~1.7 µs a line kept in a batch and written); anything else goes to `JSON.stringify`.
 *
 * The pieces are joined with `Array.prototype.join`, not a template literal: a template makes a
 * tree of the strings it concatenates, which V8 flattens only when the line is written, so every
 * line waiting in a batch kept its tree alive through young collections (scavenges 10-50 % longer
 * at 100k resources); a join builds one flat string.
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
