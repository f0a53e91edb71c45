import type { Readable } from 'node:stream';

/** Longer than any record line the export writes (MAX_TEXT characters twice, escaped): a longer one is not ours. */
export const MAX_LINE_BYTES = 256 * 1024;

/**
 * The lines of a stream, without their newline, decoded as UTF-8. A line past `maxBytes` is
 * dropped whole rather than held: the index is the archive's, so a file of one endless line is
 * read at the cost of one window, not of the file.
 */
export async function* linesOf(stream: Readable, maxBytes = MAX_LINE_BYTES): AsyncGenerator<string> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let dropping = false;
  for await (const data of stream) {
    const chunk = data as Buffer;
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      if (!dropping && pendingBytes + nl - start <= maxBytes) {
        pending.push(chunk.subarray(start, nl));
        yield Buffer.concat(pending).toString('utf8');
      }
      pending = [];
      pendingBytes = 0;
      dropping = false;
      start = nl + 1;
    }
    if (dropping || start === chunk.length) continue;
    pendingBytes += chunk.length - start;
    if (pendingBytes > maxBytes) {
      dropping = true;
      pending = [];
      pendingBytes = 0;
    } else pending.push(chunk.subarray(start));
  }
  if (!dropping && pendingBytes > 0) yield Buffer.concat(pending).toString('utf8');
}
