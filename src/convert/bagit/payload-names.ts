import { safeNameOf } from '../file-name.js';

/**
 * The name in `data/` of an archive entry: its own path where every segment is already a plain
 * name (letters, digits, `.`, `_`, `-`, not starting with a dot, not a Windows device name), which
 * the names an export writes all are; else each odd segment made safe as convert makes names
 * safe (file-name.ts), keeping a plain extension. So the bag opens on any file system and its
 * manifest lines need no percent-encoding (RFC 8493 2.1.3). Every name is in lower case: ids a
 * server chose may differ only by case (`A.json`, `a.json`), which a case-insensitive file system
 * (APFS, NTFS) the bag is copied to takes for one file; in one case, the writer's own folder sees
 * the clash and numbers the second.
 */
const PLAIN = /^[a-z0-9_][a-z0-9._-]{0,199}$/;
const DEVICE = /^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])(?:\..*)?$/i;
const EXTENSION = /\.([A-Za-z0-9]{1,12})$/;

export function payloadNameOf(entryPath: string): string {
  return entryPath
    .split('/')
    .map((segment) => {
      const lower = segment.toLowerCase();
      if (PLAIN.test(lower) && !DEVICE.test(lower) && !lower.endsWith('.')) return lower;
      const found = EXTENSION.exec(segment)?.[1];
      // `.hidden` is a name, not an extension.
      const extension = found !== undefined && /[^.]/.test(segment.slice(0, -found.length - 1)) ? found : undefined;
      const stem = extension === undefined ? segment : segment.slice(0, -extension.length - 1);
      return extension === undefined ? safeNameOf(stem) : `${safeNameOf(stem)}.${extension.toLowerCase()}`;
    })
    .join('/');
}

/** The same name with `-2`, `-3`... before its extension, for a name another entry already took. */
export function numberedName(name: string, n: number): string {
  const slash = name.lastIndexOf('/');
  const dot = name.lastIndexOf('.');
  return dot > slash + 1 ? `${name.slice(0, dot)}-${n}${name.slice(dot)}` : `${name}-${n}`;
}
