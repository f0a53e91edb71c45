import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRabbitError } from '../core/errors.js';
import { searchArchive } from '../search/search-archive.js';
import { SEARCH_KINDS, type SearchKind } from '../search/search-record.js';
import { INDEX_PATH, SEARCH_PAGE_CSP } from '../site/index-html.js';
import { SEARCH_BOX_PATH } from '../site/search-box.js';
import { placesOf } from '../site/search-places.js';
import { VIEW_HEADERS } from '../site/view-policy.js';

/** `view`'s search: `/_search?q=…&kind=…&prototype=…&limit=…`, answered by the command's own search. */
export const SEARCH_ENDPOINT = '/_search?';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/**
 * Answers a search as JSON lines, `{"hit":…}` each as it is found, then `{"summary":…}` (absent when
 * the limit cut it short). The search stops when the browser goes away.
 */
export async function answerSearch(zipPath: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const params = new URL(req.url ?? '/', 'http://localhost').searchParams;
  const limit = Math.min(MAX_LIMIT, Math.max(1, Number.parseInt(params.get('limit') ?? '', 10) || DEFAULT_LIMIT));
  const kinds = params.getAll('kind').filter((k): k is SearchKind => (SEARCH_KINDS as readonly string[]).includes(k));
  const stop = new AbortController();
  res.on('close', () => stop.abort());
  const head = { ...VIEW_HEADERS, 'content-type': 'application/x-ndjson; charset=utf-8' };
  let count = 0;
  try {
    for await (const event of searchArchive({
      archive: zipPath,
      query: params.get('q') ?? '',
      kinds,
      prototypes: params.getAll('prototype'),
      places: placesOf,
      signal: stop.signal,
    })) {
      if (!res.headersSent) res.writeHead(200, head);
      if (event.type === 'summary') res.write(`${JSON.stringify({ summary: event.summary })}\n`);
      else if (count++ < limit) res.write(`${JSON.stringify({ hit: event.hit })}\n`);
      else break;
    }
  } catch (error) {
    if (!isRabbitError(error) || res.headersSent) throw error;
    const status = error.code === 'USAGE' ? 400 : 500;
    res.writeHead(status, head).end(`${JSON.stringify({ error: { code: error.code, message: error.message } })}\n`);
    return;
  }
  res.end();
}

/**
 * The headers of an entry. The pages that carry the search box (index.html and the overview
 * pages) may run one script, named by its full URL: the box, which the server answers from its
 * own copy (serve-archive.ts), and ask `/_search`. Every other entry gets the viewer's policy, no
 * script at all.
 */
export function headersFor(name: string, root: string): Readonly<Record<string, string>> {
  if (name !== INDEX_PATH && !/^overview\/prototype-\d+\.html$/.test(name)) return VIEW_HEADERS;
  // `root` is the archive's address as the browser sees it, the view's token included.
  const policy = SEARCH_PAGE_CSP.replace("script-src 'self'", `script-src ${root}${SEARCH_BOX_PATH}`);
  return {
    ...VIEW_HEADERS,
    'content-security-policy': `${policy}; frame-ancestors 'none'; sandbox allow-scripts allow-same-origin`,
  };
}
