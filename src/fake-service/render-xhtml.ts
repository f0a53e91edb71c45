import { escapeAttribute, escapeText } from '../core/xml-escape.js';
import { boxOf, visibleElements } from './element-geometry.js';
import type { ElementRecord, PageRecord, PrototypeHead } from './model.js';
import { STATIC_PATHS } from './static-assets.js';

/**
 * The page as the result view showed it. It references assets the way the live rendering did
 * (api-notes.md): root-relative, absolute on the service host, document-relative, and one on
 * another host that an exporter must never fetch.
 */
export const FOREIGN_STYLESHEET = 'https://fonts.example.com/x.css';

// The page lives at /rabbit/api/prototypes/{id}/pages/{page}.html: four levels up is /rabbit/.
const RELATIVE_ICON = `../../../..${STATIC_PATHS.icon.slice('/rabbit'.length)}`;

export function renderXhtml(baseUrl: string, proto: PrototypeHead, page: PageRecord): string {
  const title = `${escapeText(page.name)} – ${escapeText(proto.name)}`;
  const elements = visibleElements(proto, page).map(renderElement).join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
<head>
<meta http-equiv="Content-Type" content="application/xhtml+xml; charset=utf-8" />
<title>${title}</title>
<link rel="stylesheet" type="text/css" href="${STATIC_PATHS.css}" />
<link rel="stylesheet" type="text/css" href="${FOREIGN_STYLESHEET}" />
</head>
<body>
<div class="header"><img class="logo" src="${escapeAttribute(baseUrl + STATIC_PATHS.logo)}" alt="Rabbit" /><h1>${escapeText(page.name)}</h1></div>
<div class="page" id="${escapeAttribute(page.id)}">
${elements}
</div>
<div class="footer"><img class="icon" src="${RELATIVE_ICON}" alt="" /> ${escapeText(`${proto.name} & friends`)}</div>
</body>
</html>
`;
}

function renderElement(element: ElementRecord): string {
  const box = boxOf(element);
  const style = `left:${box.x}px;top:${box.y}px;width:${box.width}px;height:${box.height}px`;
  const text = typeof element.text === 'string' ? escapeText(element.text) : '';
  const target = typeof element.target === 'string' && /^page\d+$/.test(element.target) ? element.target : undefined;
  // Links to sibling pages stay relative, so an archive that keeps pages side by side still works.
  const inner = target === undefined ? text : `<a href="${target}.html">${text || escapeText(target)}</a>`;
  return `<div class="element ${escapeAttribute(String(element.type))}" id="${escapeAttribute(element.id)}" style="${style}">${inner}</div>`;
}
