import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRabbitError, RabbitError } from '../core/errors.js';
import { searchArchive, type SearchEvent, type SearchOptions } from '../search/search-archive.js';
import { SEARCH_KINDS, type SearchKind } from '../search/search-record.js';
import { SEARCH_PAGE_CSP } from '../site/index-html.js';
import { SEARCH_BOX_PATH } from '../site/search-box.js';
import { placesOf } from '../site/search-places.js';
import { VIEW_HEADERS } from '../site/view-policy.js';

/** `view`'s search: `/_search?q=…&kind=…&prototype=…&limit=…`, answered by the command's own search. */
export const SEARCH_ENDPOINT = '/_search?';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/** The command's search, or what a test runs in its place. */
export type SearchRun = (options: SearchOptions) => AsyncIterable<SearchEvent>;

export type SearchAnswer = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** Why a search stopped before its end: a newer one took its place. */
const SUPERSEDED = 'a newer search replaced this one';

/**
 * Answers searches as JSON lines, `{"hit":…}` each as it is found, then `{"summary":…}` (absent when
 * the limit cut it short), or `{"stopped":…}` when a newer search took its place.
 *
 * One search runs at a time. Each costs what the command's search costs (on an archive of a million
 * entries, a second index of the zip, its catalog and some 100 MiB, for a minute), and the box asks
 * again at every pause in typing without cancelling what it asked before, so searches run side by
 * side would add up without bound. A new search stops the one running (its answer ends with
 * `stopped`) and starts once that one has let go. A search also stops when the browser goes away.
 */
export function searchEndpoint(zipPath: string, search: SearchRun = searchArchive): SearchAnswer {
  let last: { stop: AbortController; done: Promise<unknown> } | undefined;
  return (req, res) => {
    const stop = new AbortController();
    res.on('close', () => stop.abort());
    const before = last;
    before?.stop.abort(SUPERSEDED);
    const answer = (async () => {
      await before?.done;
      await answerSearch(zipPath, req, res, stop.signal, search);
    })();
    last = { stop, done: answer.catch(() => undefined) };
    return answer;
  };
}

async function answerSearch(
  zipPath: string,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
  search: SearchRun,
): Promise<void> {
  const params = new URL(req.url ?? '/', 'http://localhost').searchParams;
  const limit = Math.min(MAX_LIMIT, Math.max(1, Number.parseInt(params.get('limit') ?? '', 10) || DEFAULT_LIMIT));
  const kinds = params.getAll('kind').filter((k): k is SearchKind => (SEARCH_KINDS as readonly string[]).includes(k));
  const head = { ...VIEW_HEADERS, 'content-type': 'application/x-ndjson; charset=utf-8' };
  let count = 0;
  try {
    if (signal.aborted) throw new RabbitError('INTERRUPTED', 'the search was interrupted');
    for await (const event of search({
      archive: zipPath,
      query: params.get('q') ?? '',
      kinds,
      prototypes: params.getAll('prototype'),
      places: placesOf,
      signal,
    })) {
      if (!res.headersSent) res.writeHead(200, head);
      if (event.type === 'summary') res.write(`${JSON.stringify({ summary: event.summary })}\n`);
      else if (count++ < limit) res.write(`${JSON.stringify({ hit: event.hit })}\n`);
      else break;
    }
  } catch (error) {
    if (isRabbitError(error) && error.code === 'INTERRUPTED' && signal.reason === SUPERSEDED) {
      // Said in a line of its own, after whatever hits went already: the box shows only its latest search's.
      if (!res.headersSent) res.writeHead(200, head);
      res.end(`${JSON.stringify({ stopped: { code: error.code, message: SUPERSEDED } })}\n`);
      return;
    }
    if (!isRabbitError(error) || res.headersSent) throw error;
    const status = error.code === 'USAGE' ? 400 : 500;
    res.writeHead(status, head).end(`${JSON.stringify({ error: { code: error.code, message: error.message } })}\n`);
    return;
  }
  res.end();
}

/**
 * The headers of the pages that carry the search box (index.html and the overview pages, which the
 * server renders itself: own-pages.ts). They may run one script, named by its full URL: the box,
 * which the server also answers from its own copy (serve-archive.ts), and ask `/_search`. Every
 * entry of the archive gets the viewer's policy, no script at all.
 */
export function searchPageHeaders(root: string): Readonly<Record<string, string>> {
  // `root` is the archive's address as the browser sees it, the view's token included.
  const policy = SEARCH_PAGE_CSP.replace("script-src 'self'", `script-src ${root}${SEARCH_BOX_PATH}`);
  return {
    ...VIEW_HEADERS,
    'content-security-policy': `${policy}; frame-ancestors 'none'; sandbox allow-scripts allow-same-origin`,
  };
}
