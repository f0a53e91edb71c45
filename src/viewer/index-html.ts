import type { ManifestError } from '../manifest/types.js';
import type { DiscussionSummary, PageSummary, PrototypeSummary } from './archive-data.js';

/**
 * index.html at the archive root: one self-contained page (inline CSS, no script) that works from
 * file:// after unzipping and from `rabbit-export view`. Every name is the service's text and goes
 * through `escapeHtml`; every link is an archive entry name, which is safe by construction.
 */
export interface IndexInput {
  baseUrl: string;
  prototypes: PrototypeSummary[];
  errors: readonly ManifestError[];
}

export const INDEX_PATH = 'index.html';

const INDEX_CSP = "default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'";

export function renderIndex(input: IndexInput): string {
  const toc = input.prototypes.map((p) => `<li><a href="#prototype-${p.id}">${nameOf(p.name, `Prototype ${p.id}`)}</a></li>`).join('');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${INDEX_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Rabbit archive – ${escapeHtml(input.baseUrl)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>Rabbit archive</h1><p>Exported from <code>${escapeHtml(input.baseUrl)}</code>: ${input.prototypes.length} prototype${input.prototypes.length === 1 ? '' : 's'}.${input.errors.length > 0 ? ` <strong class="warn">Incomplete: ${input.errors.length} resource${input.errors.length === 1 ? '' : 's'} could not be archived (see the end of this page).</strong>` : ''}</p>
<nav><ul class="toc">${toc}</ul></nav></header>
<main>
${input.prototypes.map(renderPrototype).join('\n')}
</main>
${renderErrors(input.errors)}
</body>
</html>
`;
}

function renderPrototype(p: PrototypeSummary): string {
  const changed = p.lastModification === null ? 'unknown' : formatDate(p.lastModification);
  const milestones = p.milestones.length === 0
    ? '<p class="muted">No milestones.</p>'
    : `<table><thead><tr><th>Revision</th><th>Milestone</th><th>Created</th><th>By</th></tr></thead><tbody>${p.milestones
        .map((m) => `<tr><td>${m.revision}</td><td>${escapeHtml(m.name)}</td><td>${m.created === null ? '' : formatDate(m.created)}</td><td>${escapeHtml(m.user ?? '')}</td></tr>`)
        .join('')}</tbody></table>`;
  const layers = p.layers.length === 0
    ? '<p class="muted">No layers.</p>'
    : `<ul>${p.layers.map((l) => `<li>${nameOf(l.name, l.id)} <span class="muted">(${countText(l.elementCount)})</span></li>`).join('')}</ul>`;
  let marker = 0;
  const numbered = new Map<DiscussionSummary, number>();
  for (const page of p.pages) for (const d of page.discussions) numbered.set(d, ++marker);
  for (const d of p.otherDiscussions) numbered.set(d, ++marker);
  const discussions = [...numbered].map(([d, n]) => renderDiscussion(d, n, p)).join('');
  return `<section class="prototype" id="prototype-${p.id}">
<h2>${nameOf(p.name, `Prototype ${p.id}`)}${p.complete ? '' : ' <span class="warn">(incomplete)</span>'}</h2>
<p class="meta">Prototype ${p.id} · revision ${escapeHtml(p.revision)} · last changed ${changed}${p.lastUser === null ? '' : ` by ${escapeHtml(p.lastUser)}`}</p>
<h3>Pages</h3>
<div class="pages">${p.pages.map((page) => renderPage(page, numbered)).join('')}</div>
<div class="columns"><div><h3>Milestones</h3>${milestones}</div><div><h3>Layers</h3>${layers}</div></div>
<h3>Discussions</h3>${discussions === '' ? '<p class="muted">No discussions.</p>' : `<ol class="discussions">${discussions}</ol>`}
</section>`;
}

function renderPage(page: PageSummary, numbered: Map<DiscussionSummary, number>): string {
  const size = page.png ?? { width: 320, height: 240 };
  const image = page.png
    ? `<img src="${page.png.path}" width="${size.width}" height="${size.height}" alt="${escapeHtml(page.name ?? page.id)}">`
    : `<span class="noimage">no image archived</span>`;
  const markers = page.discussions
    .filter((d) => d.x !== null && d.y !== null)
    .map((d) => {
      const left = clampPercent((d.x as number) / size.width);
      const top = clampPercent((d.y as number) / size.height);
      return `<span class="marker" style="left:${left}%;top:${top}%" title="${escapeHtml(d.title ?? '')}">${numbered.get(d) ?? ''}</span>`;
    })
    .join('');
  const shot = `<span class="shot" style="aspect-ratio:${size.width} / ${size.height}">${image}${markers}</span>`;
  const layers = page.layerNames.length === 0 ? '' : `<br><span class="muted">Layers: ${page.layerNames.map(escapeHtml).join(', ')}</span>`;
  return `<figure class="page" id="page-${page.id}">${page.open ? `<a href="${page.open}">${shot}</a>` : shot}
<figcaption>${page.open ? `<a href="${page.open}">${nameOf(page.name, page.id)}</a>` : nameOf(page.name, page.id)} <span class="muted">(${countText(page.elementCount)})</span>${layers}</figcaption></figure>`;
}

function renderDiscussion(d: DiscussionSummary, n: number, p: PrototypeSummary): string {
  const page = p.pages.find((pg) => pg.discussions.includes(d));
  const where = page ? ` <span class="muted">on ${nameOf(page.name, page.id)}${d.x !== null && d.y !== null ? ` at ${d.x}, ${d.y}` : ''}</span>` : '';
  const entries = d.entries
    .map((e) => `<li><span class="author">${escapeHtml(e.author ?? 'unknown')}</span> <span class="muted">${e.timestamp === null ? '' : formatDate(e.timestamp)}</span><br>${escapeHtml(e.text ?? '')}</li>`)
    .join('');
  return `<li value="${n}"><strong>${nameOf(d.title, `Discussion ${d.id}`)}</strong>${where}<ul class="entries">${entries}</ul></li>`;
}

function renderErrors(errors: readonly ManifestError[]): string {
  if (errors.length === 0) return '';
  const items = errors.map((e) => `<li><code>${escapeHtml(e.source)}</code>: ${escapeHtml(e.message)}</li>`).join('');
  return `<footer><h2>Not archived</h2><ul>${items}</ul></footer>`;
}

function nameOf(name: string | null, fallback: string): string {
  return name === null || name === '' ? `<span class="muted">${escapeHtml(fallback)}</span>` : escapeHtml(name);
}

function countText(count: number | null): string {
  return count === null ? 'elements unknown' : `${count} element${count === 1 ? '' : 's'}`;
}

function clampPercent(ratio: number): string {
  return (Math.min(1, Math.max(0, ratio)) * 100).toFixed(2);
}

/** Text and attribute values alike: the five characters that can end either. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
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
.toc{display:flex;flex-wrap:wrap;gap:6px 18px;padding:0;list-style:none}
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
.discussions>li{margin-bottom:10px}.entries{list-style:none;padding-left:12px;border-left:3px solid #eee}.author{font-weight:600}
`;
