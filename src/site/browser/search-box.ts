/**
 * The search box of index.html and the overview pages, as the browser runs it: bundled with the
 * command's own folding (scripts/bundle-browser.mjs) into the one script those pages may load,
 * `search/search-box.js`. From file:// it reads the index parts the export wrote, each a script
 * calling back (fetch() of a file is blocked), loading them one at a time only until enough hits
 * are shown. Under `view` (http) it asks the server's `/_search`, which runs the command's own
 * search. Every value from the archive is put in the page as text, never as markup, and a target
 * is a link only when it is a plain path into the archive.
 */
import { foldText, foldWithOffsets } from '../../search/fold.js';
import { PART_CALLBACK, PARTS_CALLBACK } from '../../search/search-callbacks.js';

/** Hits shown at most; past them the box says to narrow the search. */
const LIMIT = 100;
/** Characters of context shown on each side of a match. */
const CONTEXT = 40;
/** The pause in typing after which the box searches. */
const DELAY = 120;
/** A target the box links to: a relative path inside the archive, no `.` or `..` segment, and an optional fragment. */
const TARGET = /^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|#|$))[A-Za-z0-9._/-]{1,400}(?:#[A-Za-z0-9_-]{0,200})?$/;

/** One hit as the box shows it: the index's records give these, and so does the server's `/_search`. */
interface Hit {
  kind: string;
  field: string;
  prototype: { id: string; name: string | null };
  page: { id: unknown; name: string } | null;
  layer: { id: unknown; name: string } | null;
  id: string;
  target: string;
  before: string;
  match: string;
  after: string;
}

/** Shows a hit; false once no more may be shown (the limit, or a newer search). */
type Emit = (hit: Hit) => boolean;

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the search box has no #${id}`);
  return node as T;
}

const me = document.currentScript;
if (me === null) throw new Error('the search box runs as a classic script');
const root = me.getAttribute('data-root') ?? '';
const only = me.getAttribute('data-prototype');
// Where the index lies in the archive, as the page that loads the box says (the archive's table of
// names is the export's, not the browser's): the list of parts, and each part's name around its id.
const partsPath = me.getAttribute('data-parts') ?? '';
const partPrefix = me.getAttribute('data-part-prefix') ?? '';
const partSuffix = me.getAttribute('data-part-suffix') ?? '';
const form = byId<HTMLFormElement>('search');
const input = byId<HTMLInputElement>('search-q');
const status = byId<HTMLOutputElement>('search-status');
const list = byId<HTMLOListElement>('search-hits');
const served = location.protocol === 'http:' || location.protocol === 'https:';

/** Index parts loaded so far, by prototype id. */
const parts = new Map<string, unknown[]>();
/** Loads waiting for their file's callback, by prototype id ('' for the list of parts). */
const waiting = new Map<string, () => void>();
/** The prototype ids the index lists, once its list is loaded. */
let ids: string[] | null = null;
/** The current search: an older one stops at its next step. */
let run = 0;
let timer = 0;

function onParts(listed: unknown): void {
  // Ids name the files loaded next: only those of the archive's shape, so no path can leave its folder.
  // Each once: a list naming one part many times must not show its hits many times.
  if (Array.isArray(listed)) ids = Array.from(new Set(listed.map(String).filter((id) => /^[0-9]{1,40}$/.test(id))));
  settle('');
}

function onPart(id: unknown, records: unknown): void {
  if (Array.isArray(records) && !parts.has(String(id))) parts.set(String(id), records);
  settle(String(id));
}

function settle(key: string): void {
  const done = waiting.get(key);
  if (done) {
    waiting.delete(key);
    done();
  }
}

/** Loads one file of the index as a script; settled by its callback, or by its failure to load. */
function load(src: string, key: string): Promise<void> {
  return new Promise((resolve) => {
    waiting.set(key, resolve);
    const tag = document.createElement('script');
    tag.src = src;
    tag.onerror = () => settle(key);
    document.head.appendChild(tag);
  });
}

function el(name: string, text?: string, cls?: string): HTMLElement {
  const node = document.createElement(name);
  if (text) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

function cut(points: string[], from: number, to?: number): string {
  return points.slice(from, to).join('');
}

/** The match in `text` and a little on each side, by code points; null when the folded text holds no match. */
function context(text: string, query: string): { before: string; match: string; after: string } | null {
  const f = foldWithOffsets(text);
  const at = f.folded.indexOf(query);
  if (at < 0) return null;
  const start = f.from[at] ?? 0;
  const last = f.from[at + query.length - 1] ?? start;
  const end = last + ((text.codePointAt(last) ?? 0) > 0xffff ? 2 : 1);
  const before = Array.from(text.slice(0, start));
  const match = Array.from(text.slice(start, end));
  const after = Array.from(text.slice(end));
  return {
    before: (before.length > CONTEXT ? '\u2026' : '') + cut(before, Math.max(0, before.length - CONTEXT)),
    match: cut(match, 0, 80) + (match.length > 80 ? '\u2026' : ''),
    after: cut(after, 0, CONTEXT) + (after.length > CONTEXT ? '\u2026' : ''),
  };
}

function show(hit: Hit): void {
  const item = el('li', '', 'hit');
  const where = [hit.prototype.name || 'Prototype ' + hit.prototype.id];
  if (hit.page) where.push(hit.page.name);
  if (hit.layer) where.push('layer ' + hit.layer.name);
  if (hit.kind === 'element') where.push('element ' + hit.id);
  const head = el(TARGET.test(hit.target) ? 'a' : 'span', where.join(' \u203a '));
  if (head instanceof HTMLAnchorElement) head.href = root + hit.target;
  item.appendChild(head);
  item.appendChild(el('span', ' ' + hit.kind + (hit.field === 'name' ? '' : ' ' + hit.field), 'muted'));
  const text = el('div', '', 'context');
  text.appendChild(document.createTextNode(hit.before));
  text.appendChild(el('mark', hit.match));
  text.appendChild(document.createTextNode(hit.after));
  item.appendChild(text);
  list.appendChild(item);
}

function say(text: string): void {
  status.textContent = text;
}

/** The hits of one prototype's part: `[kind, field, page, layer, id, target, text, folded]` records. */
function hitsOf(id: string, records: unknown[], query: string, emit: Emit): boolean {
  let name: string | null = null;
  const pages = new Map<unknown, string>();
  const layers = new Map<unknown, string>();
  for (const each of records) {
    if (!Array.isArray(each) || each.length !== 8) continue;
    const r = each as unknown[];
    if (r[0] === 'prototype' && name === null) name = String(r[6]);
    if (r[0] === 'page' && r[1] === 'name') pages.set(r[2], String(r[6]));
    if (r[0] === 'layer' && r[1] === 'name') layers.set(r[3], String(r[6]));
    const folded = r[7];
    if (typeof folded !== 'string' || folded.indexOf(query) < 0) continue;
    const c = context(String(r[6]), query);
    if (!c) continue;
    const hit: Hit = {
      kind: r[0] as string,
      field: String(r[1]),
      prototype: { id, name },
      page: r[2] ? { id: r[2], name: pages.get(r[2]) || String(r[2]) } : null,
      layer: r[3] ? { id: r[3], name: layers.get(r[3]) || String(r[3]) } : null,
      id: String(r[4]),
      target: String(r[5]),
      ...c,
    };
    if (!emit(hit)) return false;
  }
  return true;
}

/** From the unzipped files: the parts one prototype at a time, until the limit. */
async function searchFiles(query: string, mine: number, emit: Emit): Promise<boolean> {
  if (ids === null) await load(root + partsPath, '');
  if (ids === null) {
    say('This archive has no search index.');
    return false;
  }
  const todo = only ? ids.filter((id) => id === only) : ids;
  for (const id of todo) {
    if (!parts.has(id)) await load(root + partPrefix + id + partSuffix, id);
    if (mine !== run) return false;
    if (!hitsOf(id, parts.get(id) ?? [], query, emit)) return false;
  }
  return true;
}

/** Under `view`: the server's search, one JSON record a line. */
async function searchServer(query: string, mine: number, emit: Emit): Promise<boolean> {
  // Relative to the archive's root, so the address view printed (its token included) is kept.
  const scope = only ? `&prototype=${encodeURIComponent(only)}` : '';
  const url = `${root}_search?q=${encodeURIComponent(query)}&limit=${LIMIT + 1}${scope}`;
  const answer = await fetch(url);
  if (!answer.ok) {
    say('The search failed.');
    return false;
  }
  const lines = (await answer.text()).split('\n');
  for (const line of lines) {
    if (mine !== run || line === '') continue;
    const value = JSON.parse(line) as { hit?: Hit };
    if (value.hit && !emit(value.hit)) return false;
  }
  return true;
}

async function search(raw: string): Promise<void> {
  const mine = ++run;
  const query = foldText(raw.trim());
  list.textContent = '';
  say('');
  if (query === '') return;
  say('Searching\u2026');
  let count = 0;
  const emit: Emit = (hit) => {
    if (mine !== run) return false;
    if (count === LIMIT) return false;
    count++;
    show(hit);
    return true;
  };
  const whole = await (served ? searchServer : searchFiles)(query, mine, emit);
  if (mine !== run) return;
  say(count === 0 ? 'No hits.' : countText(count, whole));
}

function countText(count: number, whole: boolean): string {
  const hits = `${count}${whole ? '' : '+'} hit${count === 1 ? '' : 's'}`;
  return whole ? hits : `${hits}: narrow the search to see the rest.`;
}

/** The query in the page's address, so that a search can be bookmarked. */
function remember(value: string): void {
  try {
    history.replaceState(null, '', value === '' ? location.pathname : '?q=' + encodeURIComponent(value));
  } catch {
    /* a file:// page may refuse */
  }
}

Object.assign(window, { [PARTS_CALLBACK]: onParts, [PART_CALLBACK]: onPart });
form.addEventListener('submit', (event) => event.preventDefault());
input.addEventListener('input', () => {
  clearTimeout(timer);
  timer = setTimeout(() => {
    remember(input.value);
    void search(input.value);
  }, DELAY);
});
const asked = new URLSearchParams(location.search).get('q');
if (asked) {
  input.value = asked;
  void search(asked);
}
