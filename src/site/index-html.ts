import type { ManifestError } from '../manifest/types.js';
import type { DiscussionSummary, PageSummary, PrototypeSummary } from './archive-data.js';
import { relativeEntryUrl } from './requisites/rewrite.js';
import { searchBoxHtml } from './search-box.js';
import { escapeAttribute, escapeText } from '../core/xml-escape.js';
import { generatedEntryOf } from '../api/generated-entries.js';

/**
 * The overview: index.html at the archive root lists the prototypes, and each prototype has a page
 * of its own (`overview/prototype-{id}.html`) with its pages, milestones, layers and discussions, so
 * the top page stays small however large the account. Self-contained pages (inline CSS, no script)
 * that work from file:// after unzipping and from `rabbit-export view`. Every name is the
 * service's text and goes through the one escaper (core/xml-escape.ts); every link is an archive entry name, safe by
 * construction.
 */
export interface IndexInput {
  baseUrl: string;
  prototypes: IndexEntry[];
  /** The first errors of the archive, and how many there are in all. */
  errors: readonly ManifestError[];
  errorCount: number;
  /** Whether the archive has a search index: the page then carries the search box. */
  search?: boolean;
}

/** What the top page says of one prototype. */
export interface IndexEntry {
  id: string;
  name: string | null;
  revision: string;
  complete: boolean;
  pages: number;
  /** The first page's image, as a thumbnail. */
  thumbnail?: { path: string; width: number; height: number };
}

export const INDEX_PATH = generatedEntryOf('index');

/**
 * The page of one prototype's overview: beside index.html rather than among the prototype's files,
 * which hold only what the service served and the viewable copies made from it.
 */
export function prototypeIndexPath(id: string): string {
  return generatedEntryOf('overview', { prototype: id });
}

/** Errors listed on the top page; the manifest lists them all. */
export const INDEX_ERROR_LIMIT = 100;

const INDEX_CSP =
  "default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'";

/**
 * A page with the search box may run scripts from the archive's own files (the box's, and the index
 * parts it loads): never inline, never eval. Under `view` the server narrows it to the box's file
 * and lets it ask `/_search` (connect-src).
 */
export const SEARCH_PAGE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self' file: data:; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'";

export function renderIndex(input: IndexInput): string {
  const count = input.prototypes.length;
  const warn =
    input.errorCount > 0
      ? ` <strong class="warn">Incomplete: ${input.errorCount} resource${input.errorCount === 1 ? '' : 's'} could not be archived (see the end of this page).</strong>`
      : '';
  const items = input.prototypes.map((p) => {
    const href = prototypeIndexPath(p.id);
    const image = p.thumbnail
      ? `<img src="${escapeAttribute(p.thumbnail.path)}" width="${p.thumbnail.width}" height="${p.thumbnail.height}" alt="">`
      : '<span class="noimage">no image archived</span>';
    return `<li class="entry" id="prototype-${escapeAttribute(p.id)}"><a href="${escapeAttribute(href)}"><span class="shot">${image}</span>${nameOf(p.name, `Prototype ${p.id}`)}</a>${p.complete ? '' : ' <span class="warn">(incomplete)</span>'}<br><span class="muted">Prototype ${escapeText(p.id)} · revision ${escapeText(p.revision)} · ${p.pages} page${p.pages === 1 ? '' : 's'}</span></li>`;
  });
  const body = `<header><h1>Rabbit archive</h1><p>Exported from <code>${escapeText(input.baseUrl)}</code>: ${count} prototype${count === 1 ? '' : 's'}.${warn}</p></header>
${input.search === true ? `<section class="finder">${searchBoxHtml('')}</section>\n` : ''}<main><ul class="prototypes">${items.join('\n')}</ul></main>
${renderErrors(input.errors, input.errorCount)}`;
  return page(`Rabbit archive – ${input.baseUrl}`, body, input.search === true);
}

/** One prototype's page; `path` is where it lies in the archive, for relative links. */
export function renderPrototypePage(p: PrototypeSummary, baseUrl: string, search = false): string {
  const path = prototypeIndexPath(p.id);
  const href = (to: string): string => relativeEntryUrl(path, to);
  // Up from the page's folder to the archive's root, where the box finds its files.
  const root = '../'.repeat(path.split('/').length - 1);
  const box = search ? `<section class="finder">${searchBoxHtml(root, p.id)}</section>\n` : '';
  const body = `<header><p><a href="${escapeAttribute(href(INDEX_PATH))}">All prototypes</a> · <code>${escapeText(baseUrl)}</code></p></header>
${box}<main>
${renderPrototype(p, href)}
</main>`;
  return page(`${p.name ?? `Prototype ${p.id}`} – Rabbit archive`, body, search);
}

function page(title: string, body: string, search: boolean): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${search ? SEARCH_PAGE_CSP : INDEX_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeText(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

function renderPrototype(p: PrototypeSummary, href: (path: string) => string): string {
  const changed = p.lastModification === null ? 'unknown' : formatDate(p.lastModification);
  const milestones =
    p.milestones.length === 0
      ? '<p class="muted">No milestones.</p>'
      : `<table><thead><tr><th>Revision</th><th>Milestone</th><th>Created</th><th>By</th></tr></thead><tbody>${p.milestones
          .map(
            (m) =>
              `<tr><td>${m.revision}</td><td>${escapeText(m.name)}</td><td>${m.created === null ? '' : formatDate(m.created)}</td><td>${escapeText(m.user ?? '')}</td></tr>`,
          )
          .join('')}</tbody></table>`;
  const layers =
    p.layers.length === 0
      ? '<p class="muted">No layers.</p>'
      : `<ul>${p.layers.map((l) => `<li>${nameOf(l.name, l.id)} <span class="muted">(${countText(l.elementCount)})</span></li>`).join('')}</ul>`;
  let marker = 0;
  const numbered = new Map<DiscussionSummary, number>();
  for (const page of p.pages) for (const d of page.discussions) numbered.set(d, ++marker);
  for (const d of p.otherDiscussions) numbered.set(d, ++marker);
  const discussions = [...numbered].map(([d, n]) => renderDiscussion(d, n, p)).join('');
  return `<section class="prototype" id="prototype-${escapeAttribute(p.id)}">
<h2>${nameOf(p.name, `Prototype ${p.id}`)}${p.complete ? '' : ' <span class="warn">(incomplete)</span>'}</h2>
<p class="meta">Prototype ${escapeText(p.id)} · revision ${escapeText(p.revision)} · last changed ${changed}${p.lastUser === null ? '' : ` by ${escapeText(p.lastUser)}`}</p>
<h3>Pages</h3>
<div class="pages">${p.pages.map((page) => renderPage(page, numbered, href)).join('')}</div>
<div class="columns"><div><h3>Milestones</h3>${milestones}</div><div><h3>Layers</h3>${layers}</div></div>
<h3>Discussions</h3>${discussions === '' ? '<p class="muted">No discussions.</p>' : `<ol class="discussions">${discussions}</ol>`}
</section>`;
}

function renderPage(
  page: PageSummary,
  numbered: Map<DiscussionSummary, number>,
  href: (path: string) => string,
): string {
  const size = page.png ?? { width: 320, height: 240 };
  const image = page.png
    ? `<img src="${escapeAttribute(href(page.png.path))}" width="${size.width}" height="${size.height}" alt="${escapeAttribute(page.name ?? page.id)}">`
    : `<span class="noimage">no image archived</span>`;
  const markers = page.discussions
    .filter((d) => d.x !== null && d.y !== null)
    .map((d) => {
      const left = clampPercent((d.x as number) / size.width);
      const top = clampPercent((d.y as number) / size.height);
      return `<span class="marker" style="left:${left}%;top:${top}%" title="${escapeAttribute(d.title ?? '')}">${numbered.get(d) ?? ''}</span>`;
    })
    .join('');
  const shot = `<span class="shot" style="aspect-ratio:${size.width} / ${size.height}">${image}${markers}</span>`;
  const layers =
    page.layerNames.length === 0
      ? ''
      : `<br><span class="muted">Layers: ${page.layerNames.map(escapeText).join(', ')}</span>`;
  const open = page.open === undefined ? undefined : escapeAttribute(href(page.open));
  return `<figure class="page" id="page-${escapeAttribute(page.id)}">${open ? `<a href="${open}">${shot}</a>` : shot}
<figcaption>${open ? `<a href="${open}">${nameOf(page.name, page.id)}</a>` : nameOf(page.name, page.id)} <span class="muted">(${countText(page.elementCount)})</span>${layers}</figcaption></figure>`;
}

function renderDiscussion(d: DiscussionSummary, n: number, p: PrototypeSummary): string {
  const page = p.pages.find((pg) => pg.discussions.includes(d));
  const where = page
    ? ` <span class="muted">on ${nameOf(page.name, page.id)}${d.x !== null && d.y !== null ? ` at ${d.x}, ${d.y}` : ''}</span>`
    : '';
  const entries = d.entries
    .map(
      (e) =>
        `<li><span class="author">${escapeText(e.author ?? 'unknown')}</span> <span class="muted">${e.timestamp === null ? '' : formatDate(e.timestamp)}</span><br>${escapeText(e.text ?? '')}</li>`,
    )
    .join('');
  return `<li value="${n}" id="discussion-${escapeAttribute(d.id)}"><strong>${nameOf(d.title, `Discussion ${d.id}`)}</strong>${where}<ul class="entries">${entries}</ul></li>`;
}

function renderErrors(errors: readonly ManifestError[], count: number): string {
  if (count === 0) return '';
  const items = errors.map((e) => `<li><code>${escapeText(e.source)}</code>: ${escapeText(e.message)}</li>`).join('');
  const more =
    count > errors.length
      ? `<p class="muted">And ${count - errors.length} more: manifest.json lists every one.</p>`
      : '';
  return `<footer><h2>Not archived</h2><ul>${items}</ul>${more}</footer>`;
}

function nameOf(name: string | null, fallback: string): string {
  return name === null || name === '' ? `<span class="muted">${escapeText(fallback)}</span>` : escapeText(name);
}

function countText(count: number | null): string {
  return count === null ? 'elements unknown' : `${count} element${count === 1 ? '' : 's'}`;
}

function clampPercent(ratio: number): string {
  return (Math.min(1, Math.max(0, ratio)) * 100).toFixed(2);
}

/** UTC, minute precision: the same archive always renders the same bytes. */
export function formatDate(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? '' : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

const STYLE = `
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#222;background:#f6f6f4}
header,main,footer{max-width:1100px;margin:0 auto;padding:0 20px}
h1{margin:20px 0 4px}h2{margin:0 0 4px}h3{margin:18px 0 8px;font-size:15px;text-transform:uppercase;letter-spacing:.05em;color:#555}
.prototypes{display:flex;flex-wrap:wrap;gap:16px;padding:0;list-style:none}.entry{width:260px}.entry .shot{margin-bottom:6px}
.prototype{background:#fff;border:1px solid #ddd;border-radius:8px;padding:18px 20px;margin:20px 0}
.meta,.muted{color:#666}.warn{color:#b00}
.pages{display:flex;flex-wrap:wrap;gap:16px}
.page{margin:0;width:260px}
.shot{position:relative;display:block;width:100%;border:1px solid #ccc;background:#fafafa}
.shot img{display:block;width:100%;height:100%}
.noimage{display:block;padding:40% 0;text-align:center;color:#999}
.marker{position:absolute;transform:translate(-50%,-50%);min-width:20px;height:20px;border-radius:10px;background:#e5482d;color:#fff;font:bold 12px/20px sans-serif;text-align:center;box-shadow:0 0 0 2px #fff}
figcaption{margin-top:6px}
.columns{display:flex;flex-wrap:wrap;gap:0 40px}
table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}
.finder{max-width:1100px;margin:0 auto;padding:0 20px}.finder input{font:inherit;width:24em;max-width:70vw;padding:3px 6px}
.hits{padding-left:20px}.hit{margin:6px 0}.hit .context{color:#444}.hit mark{background:#ffe27a}
.discussions>li{margin-bottom:10px}.entries{list-style:none;padding-left:12px;border-left:3px solid #eee}.author{font-weight:600}
`;
