/**
 * API paths of service-api.md section 4, matched on the decoded path without query. Ids are
 * matched by shape only; whether they exist is the store's business.
 */
export const API_ROOT = '/rabbit/api/';

export type PageFormat = 'json' | 'html' | 'png' | 'xhtml';

export type Route =
  | { kind: 'prototypes' }
  | { kind: 'prototype'; protoId: string }
  | { kind: 'pages'; protoId: string }
  /** `mode` is the query's, for the older `.xhtml` views (sketched or plain). */
  | { kind: 'page'; protoId: string; pageId: string; format: PageFormat; mode?: string }
  | { kind: 'layers'; protoId: string }
  | { kind: 'layer'; protoId: string; layerId: string }
  | { kind: 'elements'; protoId: string; parentId: string }
  /** `suffixed` is false for the bare form that only DELETE accepts. */
  | { kind: 'element'; protoId: string; parentId: string; elementId: string; suffixed: boolean }
  | { kind: 'discussions'; protoId: string; pageId?: string }
  | { kind: 'discussion'; protoId: string; discussionId: string };

const PARENT = String.raw`(pages/page\d+|layers/layer\d+)`;
const PATTERNS: Array<[RegExp, (m: string[]) => Route]> = [
  [/^prototypes\.json$/, () => ({ kind: 'prototypes' })],
  [/^prototypes\/(\d+)\.json$/, ([, p]) => ({ kind: 'prototype', protoId: p! })],
  [/^prototypes\/(\d+)\/pages\.json$/, ([, p]) => ({ kind: 'pages', protoId: p! })],
  [
    /^prototypes\/(\d+)\/pages\/(page\d+)\.(json|html|png|xhtml)$/,
    ([, p, page, format]) => ({ kind: 'page', protoId: p!, pageId: page!, format: format as PageFormat }),
  ],
  [/^prototypes\/(\d+)\/layers\.json$/, ([, p]) => ({ kind: 'layers', protoId: p! })],
  [
    /^prototypes\/(\d+)\/layers\/(layer\d+)\.json$/,
    ([, p, layer]) => ({ kind: 'layer', protoId: p!, layerId: layer! }),
  ],
  [
    new RegExp(String.raw`^prototypes/(\d+)/${PARENT}/elements\.json$`),
    ([, p, parent]) => ({ kind: 'elements', protoId: p!, parentId: parentIdOf(parent!) }),
  ],
  [
    new RegExp(String.raw`^prototypes/(\d+)/${PARENT}/elements/(element\d+)(\.json)?$`),
    ([, p, parent, element, suffix]) => ({
      kind: 'element',
      protoId: p!,
      parentId: parentIdOf(parent!),
      elementId: element!,
      suffixed: suffix !== undefined,
    }),
  ],
  [/^prototypes\/(\d+)\/discussions\.json$/, ([, p]) => ({ kind: 'discussions', protoId: p! })],
  [
    /^prototypes\/(\d+)\/pages\/(page\d+)\/discussions\.json$/,
    ([, p, page]) => ({ kind: 'discussions', protoId: p!, pageId: page! }),
  ],
  [
    /^prototypes\/(\d+)\/discussions\/(\d+)\.json$/,
    ([, p, d]) => ({ kind: 'discussion', protoId: p!, discussionId: d! }),
  ],
];

export function matchRoute(pathname: string): Route | undefined {
  if (!pathname.startsWith(API_ROOT)) return undefined;
  const rest = pathname.slice(API_ROOT.length);
  for (const [pattern, build] of PATTERNS) {
    const match = pattern.exec(rest);
    if (match) return build(match);
  }
  return undefined;
}

export function isApiPath(pathname: string): boolean {
  return pathname.startsWith(API_ROOT);
}

/** The prototype a route belongs to, for access checks. */
export function routePrototype(route: Route): string | undefined {
  return route.kind === 'prototypes' ? undefined : route.protoId;
}

/** Methods each route answers; everything else is 405. */
export function allowedMethods(route: Route): string[] {
  if (route.kind === 'elements') return ['GET', 'HEAD', 'POST'];
  if (route.kind === 'element') return route.suffixed ? ['GET', 'HEAD', 'PUT', 'DELETE'] : ['DELETE'];
  return ['GET', 'HEAD'];
}

function parentIdOf(segment: string): string {
  return segment.slice(segment.indexOf('/') + 1);
}
