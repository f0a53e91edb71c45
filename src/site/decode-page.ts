import { parse, type DefaultTreeAdapterTypes } from 'parse5';

type Node = DefaultTreeAdapterTypes.Node;
type Element = DefaultTreeAdapterTypes.Element;

/** How far into a page a browser looks for a `<meta>` naming its encoding (the HTML prescan's limit). */
const PRESCAN_BYTES = 1024;

/**
 * A page's text, decoded as a browser would have decoded the rendering: a byte order mark first,
 * then the charset its Content-Type named, then a `<meta>` near the top, else UTF-8. The view is
 * always written as UTF-8 and says so, so its text and its declared encoding cannot disagree (a
 * view read in another encoding than it was cleaned in could hold markup the cleaning never saw).
 */
export function decodePage(bytes: Buffer, contentType: string | null): string {
  const label = bomLabel(bytes) ?? charsetOf(contentType) ?? metaCharset(bytes) ?? 'utf-8';
  return decodeAs(bytes, label);
}

function decodeAs(bytes: Buffer, label: string): string {
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(label);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  // 'replacement' stands for encodings browsers refuse (ISO-2022-KR, HZ...): they are read as UTF-8.
  if (decoder.encoding === 'replacement') decoder = new TextDecoder('utf-8');
  const text = decoder.decode(bytes);
  // Node's decoder reads windows-1252 (which the WHATWG labels latin1 and ascii also name) as
  // ISO-8859-1, leaving 0x80-0x9F as C1 controls: they are mapped as browsers map them.
  return decoder.encoding === 'windows-1252'
    ? text.replace(/[\u0080-\u009f]/g, (c) => WINDOWS_1252_C1[c.charCodeAt(0) - 0x80] ?? c)
    : text;
}

/** Windows-1252's characters for 0x80-0x9F; the five it leaves undefined stay as they are. */
const WINDOWS_1252_C1 = [
  '\u20ac',
  undefined,
  '\u201a',
  '\u0192',
  '\u201e',
  '\u2026',
  '\u2020',
  '\u2021',
  '\u02c6',
  '\u2030',
  '\u0160',
  '\u2039',
  '\u0152',
  undefined,
  '\u017d',
  undefined,
  undefined,
  '\u2018',
  '\u2019',
  '\u201c',
  '\u201d',
  '\u2022',
  '\u2013',
  '\u2014',
  '\u02dc',
  '\u2122',
  '\u0161',
  '\u203a',
  '\u0153',
  undefined,
  '\u017e',
  '\u0178',
];

function bomLabel(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return undefined;
}

function charsetOf(contentType: string | null): string | undefined {
  if (contentType === null) return undefined;
  const value = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
  return value === undefined ? undefined : value.toLowerCase();
}

/**
 * The encoding a `<meta charset>` or `<meta http-equiv=Content-Type>` in the first kilobyte names,
 * read from the parser's tree of those bytes (as latin1: every byte a character, ASCII intact).
 * A meta naming UTF-16 means UTF-8, as the HTML spec has it: the meta itself was ASCII.
 */
function metaCharset(bytes: Buffer): string | undefined {
  const head = parse(bytes.subarray(0, PRESCAN_BYTES).toString('latin1'));
  const found = firstMetaCharset(head);
  if (found === undefined) return undefined;
  return found.startsWith('utf-16') ? 'utf-8' : found;
}

function firstMetaCharset(node: Node): string | undefined {
  if ('tagName' in node && node.tagName === 'meta') {
    const attr = (name: string): string | undefined => (node as Element).attrs.find((a) => a.name === name)?.value;
    const charset =
      attr('charset') ??
      (attr('http-equiv')?.toLowerCase() === 'content-type' ? charsetOf(attr('content') ?? null) : undefined);
    if (charset !== undefined && charset.trim() !== '') return charset.trim().toLowerCase();
  }
  if ('childNodes' in node)
    for (const child of node.childNodes) {
      const found = firstMetaCharset(child);
      if (found !== undefined) return found;
    }
  return undefined;
}
