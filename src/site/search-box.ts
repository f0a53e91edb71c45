import { foldText, foldWithOffsets } from '../search/fold.js';
import { PART_CALLBACK, PARTS_CALLBACK, SEARCH_PARTS_PATH } from '../search/search-record.js';
import { escapeAttribute } from '../core/xml-escape.js';
import { generatedAffixes, generatedEntryOf } from '../api/generated-entries.js';

/** The box's script: one file of the archive, the only script the overview pages may run. */
export const SEARCH_BOX_PATH = generatedEntryOf('search-box');

/** A prototype's part of the index is named in the script as the table names it. */
const PART = generatedAffixes('search-part');

/** Hits shown at most; past them the box says to narrow the search. */
export const BOX_LIMIT = 100;

/**
 * The search box of index.html and the overview pages. `root` leads from the page to the
 * archive's root; `prototypeId` keeps an overview page's box to its prototype. The query is the
 * page's `?q=`, so a search can be bookmarked.
 */
export function searchBoxHtml(root: string, prototypeId?: string): string {
  const scope = prototypeId === undefined ? '' : ` data-prototype="${escapeAttribute(prototypeId)}"`;
  const label = prototypeId === undefined ? 'Search the archive' : 'Search this prototype';
  return `<form class="search" role="search" id="search"><label>${label} <input type="search" name="q" id="search-q" autocomplete="off" spellcheck="false" placeholder="names, labels, discussions"></label> <output id="search-status"></output></form>
<ol class="hits" id="search-hits"></ol>
<script src="${escapeAttribute(root + SEARCH_BOX_PATH)}" data-root="${escapeAttribute(root)}"${scope}></script>`;
}

/**
 * The script. From file:// it reads the index parts the export wrote, each a script calling back
 * (fetch() of a file is blocked), loading them one at a time only until enough hits are shown.
 * Under `view` (http) it asks the server's `/_search`, which runs the command's own search. The
 * query is folded by the command's own functions (their source is inlined). Every value from the
 * archive is put in the page as text, never as markup, and a target is a link only when it is a
 * plain path into the archive.
 */
export function searchBoxScript(): string {
  return `(function () {
'use strict';
var foldText = ${foldText.toString()};
var foldWithOffsets = ${foldWithOffsets.toString()};
var LIMIT = ${BOX_LIMIT}, CONTEXT = 40, DELAY = 120;
var me = document.currentScript;
var root = me.getAttribute('data-root') || '';
var only = me.getAttribute('data-prototype');
var form = document.getElementById('search');
var input = document.getElementById('search-q');
var status = document.getElementById('search-status');
var list = document.getElementById('search-hits');
var served = location.protocol === 'http:' || location.protocol === 'https:';
var TARGET = /^(?!\\/)(?!.*(?:^|\\/)\\.\\.?(?:\\/|#|$))[A-Za-z0-9._\\/-]{1,400}(?:#[A-Za-z0-9_-]{0,200})?$/;
var parts = new Map(), waiting = new Map(), ids = null, run = 0, timer = 0;
window.${PARTS_CALLBACK} = function (list) {
  // Ids name the files loaded next: only those of the archive's shape, so no path can leave its folder.
  // Each once: a list naming one part many times must not show its hits many times.
  if (Array.isArray(list)) ids = Array.from(new Set(list.map(String).filter(function (id) { return /^[0-9]{1,40}$/.test(id); })));
  settle('');
};
window.${PART_CALLBACK} = function (id, records) {
  if (Array.isArray(records) && !parts.has(String(id))) parts.set(String(id), records);
  settle(String(id));
};
function settle(key) {
  var done = waiting.get(key);
  if (done) { waiting.delete(key); done(); }
}
function load(src, key) {
  return new Promise(function (resolve) {
    waiting.set(key, resolve);
    var tag = document.createElement('script');
    tag.src = src;
    tag.onerror = function () { settle(key); };
    document.head.appendChild(tag);
  });
}
function el(name, text, cls) {
  var node = document.createElement(name);
  if (text) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}
function cut(points, from, to) { return points.slice(from, to).join(''); }
function context(text, query) {
  var f = foldWithOffsets(text), at = f.folded.indexOf(query);
  if (at < 0) return null;
  var start = f.from[at], last = f.from[at + query.length - 1];
  var end = last + (text.codePointAt(last) > 0xffff ? 2 : 1);
  var before = Array.from(text.slice(0, start)), match = Array.from(text.slice(start, end));
  var after = Array.from(text.slice(end));
  return {
    before: (before.length > CONTEXT ? '\\u2026' : '') + cut(before, Math.max(0, before.length - CONTEXT)),
    match: cut(match, 0, 80) + (match.length > 80 ? '\\u2026' : ''),
    after: cut(after, 0, CONTEXT) + (after.length > CONTEXT ? '\\u2026' : ''),
  };
}
function show(hit) {
  var item = el('li', '', 'hit');
  var where = [hit.prototype.name || 'Prototype ' + hit.prototype.id];
  if (hit.page) where.push(hit.page.name);
  if (hit.layer) where.push('layer ' + hit.layer.name);
  if (hit.kind === 'element') where.push('element ' + hit.id);
  var head = el(TARGET.test(hit.target) ? 'a' : 'span', where.join(' \\u203a '));
  if (head.tagName === 'A') head.href = root + hit.target;
  item.appendChild(head);
  item.appendChild(el('span', ' ' + hit.kind + (hit.field === 'name' ? '' : ' ' + hit.field), 'muted'));
  var text = el('div', '', 'context');
  text.appendChild(document.createTextNode(hit.before));
  text.appendChild(el('mark', hit.match));
  text.appendChild(document.createTextNode(hit.after));
  item.appendChild(text);
  list.appendChild(item);
}
function say(text) { status.textContent = text; }
function hitsOf(id, records, query, emit) {
  var name = null, pages = new Map(), layers = new Map();
  for (var i = 0; i < records.length; i++) {
    var r = records[i];
    if (!Array.isArray(r) || r.length !== 8) continue;
    if (r[0] === 'prototype' && name === null) name = String(r[6]);
    if (r[0] === 'page' && r[1] === 'name') pages.set(r[2], String(r[6]));
    if (r[0] === 'layer' && r[1] === 'name') layers.set(r[3], String(r[6]));
    if (typeof r[7] !== 'string' || r[7].indexOf(query) < 0) continue;
    var c = context(String(r[6]), query);
    if (!c) continue;
    var hit = { kind: r[0], field: String(r[1]), prototype: { id: id, name: name },
      page: r[2] ? { id: r[2], name: pages.get(r[2]) || String(r[2]) } : null,
      layer: r[3] ? { id: r[3], name: layers.get(r[3]) || String(r[3]) } : null,
      id: String(r[4]), target: String(r[5]), before: c.before, match: c.match, after: c.after };
    if (!emit(hit)) return false;
  }
  return true;
}
async function searchFiles(query, mine, emit) {
  if (ids === null) await load(root + '${SEARCH_PARTS_PATH}', '');
  if (ids === null) { say('This archive has no search index.'); return false; }
  var todo = only ? ids.filter(function (id) { return id === only; }) : ids;
  for (var i = 0; i < todo.length; i++) {
    var id = todo[i];
    if (!parts.has(id)) await load(root + ${JSON.stringify(PART.prefix)} + id + ${JSON.stringify(PART.suffix)}, id);
    if (mine !== run) return false;
    if (!hitsOf(id, parts.get(id) || [], query, emit)) return false;
  }
  return true;
}
async function searchServer(query, mine, emit) {
  // Relative to the archive's root, so the address view printed (its token included) is kept.
  var url = root + '_search?q=' + encodeURIComponent(query) + '&limit=' + (LIMIT + 1) + (only ? '&prototype=' + encodeURIComponent(only) : '');
  var answer = await fetch(url);
  if (!answer.ok) { say('The search failed.'); return false; }
  var lines = (await answer.text()).split('\\n');
  for (var i = 0; i < lines.length; i++) {
    if (mine !== run || lines[i] === '') continue;
    var value = JSON.parse(lines[i]);
    if (value.hit && !emit(value.hit)) return false;
  }
  return true;
}
async function search(raw) {
  var mine = ++run, query = foldText(raw.trim());
  list.textContent = '';
  say('');
  if (query === '') return;
  say('Searching\\u2026');
  var count = 0;
  var emit = function (hit) {
    if (mine !== run) return false;
    if (count === LIMIT) return false;
    count++;
    show(hit);
    return true;
  };
  var whole = await (served ? searchServer : searchFiles)(query, mine, emit);
  if (mine !== run) return;
  say(count === 0 ? 'No hits.' : count + (whole ? '' : '+') + ' hit' + (count === 1 ? '' : 's') + (whole ? '' : ': narrow the search to see the rest.'));
}
function remember(value) {
  try { history.replaceState(null, '', value === '' ? location.pathname : '?q=' + encodeURIComponent(value)); } catch (e) { /* a file:// page may refuse */ }
}
form.addEventListener('submit', function (event) { event.preventDefault(); });
input.addEventListener('input', function () {
  clearTimeout(timer);
  timer = setTimeout(function () { remember(input.value); search(input.value); }, DELAY);
});
var asked = new URLSearchParams(location.search).get('q');
if (asked) { input.value = asked; search(asked); }
})();
`;
}
