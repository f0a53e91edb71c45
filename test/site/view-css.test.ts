import { describe, expect, it } from 'vitest';
import { cleanCss, cleanInlineCss, INERT_URL } from '../../src/site/view-css.js';

/** A rewrite that keeps archive paths (`a/...`), names every value it saw, and declines the rest. */
function recorder(): { seen: [string, string][]; rewrite: (value: string, kind: string) => string | undefined } {
  const seen: [string, string][] = [];
  return {
    seen,
    rewrite: (value, kind) => {
      seen.push([value, kind]);
      return value.startsWith('a/') || value.startsWith('#') ? value : undefined;
    },
  };
}

const HOST = '//attacker.example/share';

describe('cleanCss', () => {
  it.each([
    [
      'a file: url()',
      `div{background:url(file://attacker.example/share/a.png)}`,
      'file://attacker.example/share/a.png',
    ],
    ['image-set() with a string', `div{background-image:image-set('${HOST}/is.png' 1x)}`, `${HOST}/is.png`],
    [
      '-webkit-image-set()',
      `div{background:-webkit-image-set("${HOST}/w.png" 1x, url(${HOST}/w2.png) 2x)}`,
      `${HOST}/w.png`,
    ],
    ['an escaped url(', `div{background:\\75 rl(${HOST}/esc.png)}`, `${HOST}/esc.png`],
    ['an escaped URL in url()', `div{background:url(\\2f\\2f attacker.example/share/e.png)}`, `${HOST}/e.png`],
    ['an escaped image-set', `div{background:\\69mage-set("${HOST}/ei.png" 1x)}`, `${HOST}/ei.png`],
    ['@import with a string', `@import '${HOST}/i.css';`, `${HOST}/i.css`],
    ['an escaped @import', `@\\69mport "${HOST}/ei.css";`, `${HOST}/ei.css`],
    ['@import url() after a comment', `/* x */@import/**/url(${HOST}/c.css);`, `${HOST}/c.css`],
    ['@font-face src', `@font-face{font-family:x;src:local("x"),url(${HOST}/f.woff) format("woff")}`, `${HOST}/f.woff`],
    ['src()', `div{background:src("${HOST}/s.png")}`, `${HOST}/s.png`],
    [
      'a custom property var() can put into image-set()',
      `div{--u:"${HOST}/v.png";background:image-set(var(--u) 1x)}`,
      `${HOST}/v.png`,
    ],
    ['a custom property with a ; in brackets', `div{--u:[;] "${HOST}/b.png"}`, `${HOST}/b.png`],
    ['a custom property with a ; in braces', `div{--u:{a:b;} "${HOST}/c.png"}`, `${HOST}/c.png`],
    ['a string after a } inside a function', `div{background:image-set(} "${HOST}/d.png" 1x)}`, `${HOST}/d.png`],
    ['a fill url()', `url(${HOST}/p.svg#p)`, `${HOST}/p.svg#p`],
    ['upper case and spaces', `div{background:URL(  "${HOST}/u.png"  )}`, `${HOST}/u.png`],
  ])('%s: the reference is offered to the rewrite and made inert', (_name, css, value) => {
    const { seen, rewrite } = recorder();
    const out = cleanCss(css, rewrite);
    expect(seen.map(([v]) => v)).toContain(value);
    expect(out.references).toBeGreaterThan(0);
    expect(out.text).not.toMatch(/attacker|file:/i);
    expect(out.text).toContain(`"${INERT_URL}"`);
  });

  it('keeps text strings, fragments and what the rewrite accepts; imports are stylesheets', () => {
    const { seen, rewrite } = recorder();
    const css = `@import "a/x.css"; p::before{content:"\\201C url(x)"} q{quotes:"«" "»"; font-family:"Open Sans"} li{counter-reset:n; content:counters(n, ".")} rect{fill:url(#grad)} b{background:url( a/b.png )}`;
    const out = cleanCss(css, rewrite);
    expect(out.text).toBe(
      `@import "a/x.css"; p::before{content:"\\201C url(x)"} q{quotes:"«" "»"; font-family:"Open Sans"} li{counter-reset:n; content:counters(n, ".")} rect{fill:url("#grad")} b{background:url("a/b.png")}`,
    );
    expect(seen).toEqual([
      ['a/x.css', 'stylesheet'],
      ['#grad', 'resource'],
      ['a/b.png', 'resource'],
    ]);
  });

  it('leaves CSS without references exactly as it was', () => {
    const css = 'p{color:red;content:"x"} a:hover{margin:0 \\31 px}';
    expect(cleanCss(css, () => undefined)).toEqual({ text: css, references: 0 });
    expect(cleanInlineCss('color: red; font-family: "Noto Sans", sans-serif', () => undefined)).toBe(
      'color: red; font-family: "Noto Sans", sans-serif',
    );
  });

  it('keeps UTF-8 text of inline CSS intact around a rewritten reference', () => {
    expect(cleanInlineCss(`content:"日本"; background:url(${HOST}/x.png)`, () => undefined)).toBe(
      `content:"日本"; background:url("${INERT_URL}")`,
    );
  });
});
