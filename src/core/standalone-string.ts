/**
 * A copy of `text` that stands alone. A string a parser hands out (JSON values, a name cut from a
 * path) is often a slice of the larger text it was cut from, and keeping the slice keeps that
 * whole text alive: 64 KiB of manifest for a prototype's name. Prepending a character makes V8
 * build the text anew; the slice of that is backed by this copy only.
 */
export function standalone(text: string): string {
  return ` ${text}`.slice(1);
}
