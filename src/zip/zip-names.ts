/**
 * Entry names that cannot escape the folder a zip is extracted into: the same three rules as
 * yauzl's strictFileNames, with its wording (the verifier shows it). The reader refuses a
 * directory that lists a name breaking them, and the writer never writes one, so whatever it
 * writes it can read back.
 */
export function unsafeNameReason(name: string): string | undefined {
  if (name.includes('\\')) return `invalid characters in fileName: ${name}`;
  if (name.startsWith('/') || (name.charCodeAt(1) === 0x3a && /^[a-zA-Z]:/.test(name))) return `absolute path: ${name}`;
  if (name.includes('..') && name.split('/').includes('..')) return `invalid relative path: ${name}`;
  return undefined;
}
