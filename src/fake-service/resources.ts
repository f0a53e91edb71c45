import type { Access } from './auth.js';
import { mayRead } from './auth.js';
import type { PrototypeHead } from './model.js';
import type { Representation } from './payload.js';
import { bufferPayload, JSON_TYPE, jsonPayload, PNG_TYPE, XHTML_TYPE } from './payload.js';
import { renderPagePng } from './render-png.js';
import { renderXhtml } from './render-xhtml.js';
import {
  discussionIdsJson,
  discussionJson,
  elementIdsJson,
  layerJson,
  pageJson,
  pagesListJson,
  prototypeJson,
} from './render-json.js';
import type { Route } from './routes.js';
import type { FakeStore } from './store.js';

/**
 * What a GET of a route serves, or undefined when the resource does not exist. Every body is
 * rendered once per state of its prototype, so repeated reads are byte-identical and cheap.
 * Everything under a prototype carries the prototype's lastModification: any change bumps it.
 */
export function representationOf(
  store: FakeStore,
  baseUrl: string,
  route: Route,
  access: Access,
): Representation | undefined {
  if (route.kind === 'prototypes') {
    const visible = store.prototypeIds().filter((id) => mayRead(access, id));
    return store.cached(null, `prototypes:${access.prototype ?? '*'}`, () =>
      json(visible.map(integerId), store.listLastModified(visible)),
    );
  }
  const proto = store.head(route.protoId);
  if (proto === undefined) return undefined;
  const key = routeKey(route);
  if (!exists(store, proto, route)) return undefined;
  return store.cached(route.protoId, key, () => render(store, baseUrl, proto, route));
}

function exists(store: FakeStore, proto: PrototypeHead, route: Exclude<Route, { kind: 'prototypes' }>): boolean {
  switch (route.kind) {
    case 'page':
      if (
        route.format === 'xhtml' &&
        !(store.dataset.pageViews && (route.mode === 'sketched' || route.mode === 'plain'))
      )
        return false;
      return store.page(proto.id, route.pageId) !== undefined;
    case 'layer':
      return store.layer(proto.id, route.layerId) !== undefined;
    case 'elements':
      return store.parent(proto.id, route.parentId) !== undefined;
    case 'element':
      return route.suffixed && store.element(proto.id, route.parentId, route.elementId) !== undefined;
    case 'discussions':
      return route.pageId === undefined || store.page(proto.id, route.pageId) !== undefined;
    case 'discussion':
      return store.discussion(proto.id, route.discussionId) !== undefined;
    default:
      return true;
  }
}

function render(
  store: FakeStore,
  baseUrl: string,
  proto: PrototypeHead,
  route: Exclude<Route, { kind: 'prototypes' }>,
): Representation {
  const modified = proto.lastModification;
  switch (route.kind) {
    case 'prototype':
      return json(prototypeJson(proto), modified);
    case 'pages':
      return json(
        pagesListJson(proto, store.pageIds(proto.id)!, (id) => store.page(proto.id, id)!.name),
        modified,
      );
    case 'layers':
      return json(
        proto.layers.map((layer) => layer.id),
        modified,
      );
    case 'layer':
      return json(layerJson(store.layer(proto.id, route.layerId)!), modified);
    case 'elements':
      return json(elementIdsJson(store.parent(proto.id, route.parentId)!.elements), modified);
    case 'element':
      return json(store.element(proto.id, route.parentId, route.elementId), modified);
    case 'discussions':
      return json(discussionIdsJson(proto.discussions, route.pageId), modified);
    case 'discussion':
      return json(discussionJson(proto, store.discussion(proto.id, route.discussionId)!), modified);
    case 'page': {
      const page = store.page(proto.id, route.pageId)!;
      if (route.format === 'json') return json(pageJson(page), modified);
      if (route.format === 'html' || route.format === 'xhtml') {
        const view = renderXhtml(baseUrl, proto, page);
        // The older views differ from the result view by their look only, named on the body.
        const text = route.format === 'xhtml' ? view.replace('<body>', `<body class="mode-${route.mode}">`) : view;
        const xhtml = Buffer.from(text, 'utf8');
        return { contentType: XHTML_TYPE, lastModified: modified, payload: bufferPayload(xhtml) };
      }
      const png = renderPagePng(proto, page, store.seed, store.dataset);
      return { contentType: PNG_TYPE, lastModified: modified, payload: png };
    }
  }
}

/** A listed id as the JSON number it is: a bigint past 2^53 keeps its digits (bigIds). */
function integerId(id: string): number | bigint {
  const value = Number(id);
  return Number.isSafeInteger(value) ? value : BigInt(id);
}

function routeKey(route: Route): string {
  return Object.values(route).join('/');
}

function json(value: unknown, lastModified: number): Representation {
  return { contentType: JSON_TYPE, lastModified, payload: jsonPayload(value) };
}
