import { describe, expect, it } from 'vitest';
import { hostilePage, hostileStylePage, pageHtml, type HostilePage } from '../helpers/hostile-html.js';
import { VIEW_PATH, viewOf } from '../helpers/view-of.js';
import { cssReferences, judgeReference, viewViolations, type ViewPlace } from '../helpers/view-oracle.js';

/**
 * Property: whatever a service page holds, its offline view holds nothing the policy does not
 * allow, as judged by an oracle that shares no code with the sanitizer or the rewriting (see
 * view-oracle.ts). Pages come from a seeded generator of pieces known to trouble sanitizers
 * (hostile-html.ts). `npm test` runs a fixed range of seeds; VIEW_PROPERTY_RUNS and
 * VIEW_PROPERTY_SEED run more, or others (see test/README.md). A failure names its seed and the
 * smallest set of the page's pieces that still fails.
 */

const RUNS = Number(process.env.VIEW_PROPERTY_RUNS ?? 1000);
const FIRST_SEED = Number(process.env.VIEW_PROPERTY_SEED ?? 1);
/** How many failing pages are made smaller and shown, one per kind of violation. */
const SHOWN = 12;

const ROOT = 'file:///x/extraction/';
const PLACE: ViewPlace = { root: ROOT, viewUrl: `${ROOT}${VIEW_PATH}` };

/** What the oracle finds in the view of `page`; a view that cannot be made at all is a violation too. */
function violationsOf(page: Pick<HostilePage, 'head' | 'body'>): string[] {
  let view: string;
  try {
    view = viewOf(pageHtml(page));
  } catch (error) {
    return [`making the view throws: ${String(error)}`];
  }
  return viewViolations(view, PLACE);
}

function viewText(html: string): string {
  try {
    return viewOf(html).replace(/^.*?<\/title>/s, '');
  } catch (error) {
    return String(error);
  }
}

/** A violation without its particulars (the URL, the element), to tell kinds apart. */
const kindOf = (violation: string): string => violation.replace(/: .*$/, '').replace(/ on <[^>]+>| of <[^>]+>/, '');

/** The page with as many of its pieces dropped as can be while a violation of `kind` remains. */
function smallest(page: HostilePage, kind: string): { head: string[]; body: string[] } {
  let current = { head: [...page.head], body: [...page.body] };
  const fails = (candidate: typeof current): boolean => violationsOf(candidate).some((v) => kindOf(v) === kind);
  for (let changed = true; changed;) {
    changed = false;
    for (const part of ['head', 'body'] as const)
      for (let i = current[part].length - 1; i >= 0; i--) {
        const candidate = { ...current, [part]: current[part].filter((_, j) => j !== i) };
        if (fails(candidate)) {
          current = candidate;
          changed = true;
        }
      }
  }
  return current;
}

describe('the oracle', () => {
  const view = (body: string, head = ''): string =>
    `<!DOCTYPE html><html><head><title>t</title>${head}</head><body>${body}</body></html>`;

  it('passes a view the export made of a harmless page', () => {
    const html = viewOf(
      view(
        `<a href="page2.html#x">p</a><img src="/static/a.png" srcset="/static/a.png 2x"><div style="background:url(/static/a.png)">d</div>`,
        `<link rel="stylesheet" href="/static/s.css"><style>@import "/static/s.css"; .a{background:url(data:image/png;base64,AAAA)}</style>`,
      ),
    );
    expect(html).toContain('page2.view.html#x');
    expect(viewViolations(html, PLACE)).toEqual([]);
  });

  it.each([
    ['a script', '<script>x</script>', 'element <script>'],
    ['an SVG script', '<svg><script>x</script></svg>', 'element <script>'],
    ['a handler', '<img src=x onerror=x>', 'handler onerror on <img>'],
    ['a refresh', '<meta http-equiv=refresh content="0;url=x">', 'http-equiv=refresh on <meta>'],
    ['a link to the raw page', '<a href="page1.html">x</a>', 'link to a file that is not a view in href of <a>'],
    ['a javascript: link', '<a href=" java&#x09;script:x">x</a>', 'link with scheme javascript: in href of <a>'],
    ['a //host image', '<img src="//h/x.png">', 'resource from the root or another host in src of <img>'],
    ['a \\\\host image', '<img src="\\\\h\\x.png">', 'resource from the root or another host in src of <img>'],
    ['a climb above the root', '<img src="../../../../../x.png">', 'resource outside the extraction in src of <img>'],
    [
      'an escaped climb',
      '<img src="..%2f..%2f..%2f..%2f..%2fx.png">',
      'resource outside the extraction in src of <img>',
    ],
    [
      'a srcset candidate',
      '<img srcset="a.png 1x,//h/b.png 2x">',
      'resource from the root or another host in srcset of <img>: "//h/b.png"',
    ],
    [
      'an escaped url() in a style attribute',
      '<p style="background:\\75 rl(\\2f\\2fh/x)">',
      'resource from the root or another host in style of <p>: "//h/x"',
    ],
    [
      'an @import in a <style>',
      '<style>@\\69mport "//h/i.css";</style>',
      'stylesheet from the root or another host in <style>: "//h/i.css"',
    ],
    [
      'image-set() strings',
      '<style>a{background:image-set("//h/i.png" 1x)}</style>',
      'resource from the root or another host in <style>: "//h/i.png"',
    ],
    [
      'a data: stylesheet',
      '<link rel=stylesheet href="data:text/css,x">',
      'stylesheet with scheme data: in href of <link>',
    ],
    ['a preload', '<link rel=preload href="a.png">', '<link rel=preload>'],
  ])('finds %s', (_name, body, violation) => {
    expect(viewViolations(view(body), PLACE).filter((found) => found.startsWith(violation))).not.toEqual([]);
  });

  it('finds a <style> broken out of by an escaped end tag, and what follows it', () => {
    // What the export writes today for url("data:image/png,\3c/style\3e") followed by markup.
    const broken = view(
      `<style>.x{background:url("data:image/png,</style><style>@import url(//h/x.css);</style><style>")}</style><a href="page1.html">x</a>`,
    );
    expect(viewViolations(broken, PLACE)).toEqual([
      'stylesheet from the root or another host in <style>: "//h/x.css"',
      'link to a file that is not a view in href of <a>: "page1.html"',
    ]);
  });

  it('finds a tree that changes when parsed again', () => {
    expect(
      viewViolations(view('<form><math><mtext></form><form><mglyph><style></math><img src onerror=x>'), PLACE),
    ).toContain('the tree changes when parsed again');
  });

  it('reads CSS as the tokenizer does: escapes of every length, comments, strings that are text', () => {
    expect(
      cssReferences(
        '@import "a.css"; /* url(//c) */ b{background:URL( \\00002f\\2f h/x ); content:"//t"; font:local("//l")} --u:"v"',
      ),
    ).toEqual([
      { url: 'a.css', kind: 'stylesheet' },
      { url: '//h/x', kind: 'resource' },
      { url: 'v', kind: 'resource' },
    ]);
    expect(judgeReference('data:image/png,\u003c/style\u003e', 'resource', PLACE)).toBeUndefined();
    expect(judgeReference('https://e.example/', 'resource', PLACE)).toBe('resource with scheme https:');
  });
});

describe('the generator', () => {
  it('makes the same page of the same seed, and every piece it knows over the seeds of a run', () => {
    expect(pageHtml(hostilePage(FIRST_SEED))).toBe(pageHtml(hostilePage(FIRST_SEED)));
    const all = Array.from({ length: Math.min(RUNS, 1500) }, (_, i) => pageHtml(hostilePage(FIRST_SEED + i))).join(
      '\n',
    );
    const missing = [
      '<svg',
      '<math',
      '<foreignObject',
      '<!--',
      '<![CDATA[',
      '<style',
      '<script',
      '<textarea',
      '<title>',
      '<noscript',
      '<template',
      '\\3c',
      '\\3C ',
      '\\00003c',
      'data:image/png,',
      '&#x',
      '&#6',
      '&lt',
      'javascript:',
      `//attacker.example`,
      '\\\\attacker.example',
      'srcset',
      'image-set(',
      '@import',
      'style=',
      'xlink:href',
      'cursor:',
    ].filter((piece) => !all.includes(piece));
    expect(missing).toEqual([]);
  });
});

/** Pages the generator found failing, made small by hand: each names one way around the cleaning. */
const KNOWN: [string, string][] = [
  [
    '\\3c/style\\3e in a data: URL, then a link',
    `<style>.x{background:url("data:image/png,\\3c/style\\3e")}<a href="page1.html">x</a><style></style>`,
  ],
  [
    '\\3C /style\\3E  in a data: URL, then a //host image',
    `<style>.x{background:url("data:image/png,\\3C /style\\3E ")}<img src="//attacker.example/x.png"><style></style>`,
  ],
  [
    '\\00003c in cursor:url(), then \\\\host in a style attribute',
    `<style>.x{cursor:url("data:image/png,\\00003c/style\\00003e"),auto}<div style="background:url(\\\\attacker.example\\x)">d</div><style></style>`,
  ],
  [
    'an @import smuggled inside the data: URL',
    `<style>.x{background:url("data:image/png,\\3c/style\\3e\\3cstyle\\3e@import url(../../../../../outside.css);\\3c/style\\3e\\3cstyle\\3e")}</style>`,
  ],
  [
    'the same in the head',
    `</head><style>.x{background:url("data:image/png,\\3c/style\\3e\\3cstyle\\3e@import url(//attacker.example/x.css);\\3c/style\\3e\\3cstyle\\3e")}</style><head>`,
  ],
  [
    'an SVG <style> whose text a comment splits',
    `<svg><style>@import <!---->"//attacker.example/x.css";</style></svg>`,
  ],
  [
    'an SVG <style> whose text an element splits',
    `<svg><style>.x{background:image-set(<g></g>"//attacker.example/x.png" 1x)}</style></svg>`,
  ],
  ['an SVG <template>', `<svg><template></template></svg>`],
  ['a MathML <template>', `<math><template></template></math>`],
];

describe('pages found failing', () => {
  it.each(KNOWN)('%s: the view holds nothing the policy does not allow', (_name, body) => {
    const [head, rest] = body.startsWith('</head>') ? [body.slice(7, body.indexOf('<head>')), ''] : ['', body];
    expect(violationsOf({ head: [head], body: [rest] })).toEqual([]);
  });
});

/** Both shapes of page: everything mixed, and `<style>` elements alone (where a breakout is not lost among the rest). */
const GENERATORS: [string, (seed: number) => HostilePage][] = [
  ['hostilePage', hostilePage],
  ['hostileStylePage', hostileStylePage],
];

describe('a view of any generated page', () => {
  it(`holds nothing the policy does not allow (seeds ${FIRST_SEED} to ${FIRST_SEED + RUNS - 1} of each generator)`, () => {
    const firstOfKind = new Map<string, { page: HostilePage; generator: string; count: number }>();
    for (let seed = FIRST_SEED; seed < FIRST_SEED + RUNS; seed++)
      for (const [generator, make] of GENERATORS) {
        const page = make(seed);
        for (const violation of new Set(violationsOf(page).map(kindOf))) {
          const known = firstOfKind.get(violation);
          if (known) known.count++;
          else firstOfKind.set(violation, { page, generator, count: 1 });
        }
      }
    const shown = [...firstOfKind].slice(0, SHOWN).map(([violation, { page, generator, count }]) => {
      const small = smallest(page, violation);
      return {
        violation,
        pages: count,
        seed: `${generator}(${page.seed})`,
        smallest: pageHtml(small),
        view: viewText(pageHtml(small)),
      };
    });
    expect(shown).toEqual([]);
  });
});
