import { describe, expect, it } from 'vitest';
import { readStartTag } from '../../../src/site/requisites/html-refs.js';

/**
 * The start-tag reader as it was written first, with one regular expression per attribute: the
 * hand-written reader must agree with it on every input, broken markup included.
 */
function byPattern(html: string, open: number): ReturnType<typeof readStartTag> {
  const nameMatch = /^[A-Za-z][^\t\n\f\r />]*/.exec(html.slice(open + 1, open + 64)) as RegExpExecArray;
  const element = nameMatch[0].toLowerCase();
  const attributes: ReturnType<typeof readStartTag>['attributes'] = [];
  const pattern =
    /[\t\n\f\r ]*([^\t\n\f\r "'>/=]+)(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:"([^"]*)"|'([^']*)'|([^\t\n\f\r >]+)))?|[\t\n\f\r ]*(\/?>)|[\t\n\f\r ]*[^]/gy;
  pattern.lastIndex = open + 1 + nameMatch[0].length;
  let end = html.length;
  let selfClosing = false;
  for (let m = pattern.exec(html); m; m = pattern.exec(html)) {
    if (m[5] !== undefined) {
      end = pattern.lastIndex;
      selfClosing = m[5] === '/>';
      break;
    }
    const name = m[1];
    const value = m[2] ?? m[3] ?? m[4];
    if (name === undefined || value === undefined) continue;
    const valueEnd = pattern.lastIndex - (m[4] === undefined ? 1 : 0);
    const lower = name.toLowerCase();
    if (['src', 'poster', 'href', 'xlink:href', 'rel', 'background', 'srcset', 'style'].includes(lower)) {
      attributes.push({ name: lower, start: valueEnd - value.length, end: valueEnd, raw: value });
    }
  }
  return { element, attributes, end, selfClosing };
}

/** Deterministic pseudo-random tag soup from pieces that stress the grammar's edges. */
function soup(seed: number): string {
  let state = seed >>> 0;
  const next = (n: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
  const pieces = [
    ' ',
    '\t',
    '\n',
    '\f',
    '\r',
    '  ',
    '=',
    ' = ',
    '"',
    "'",
    '>',
    '/',
    '/>',
    '<',
    'src',
    'SRC',
    'href',
    'Style',
    'style',
    'xlink:href',
    'background',
    'srcset',
    'rel',
    'poster',
    'data-x',
    'averyveryverylongname',
    'a',
    '"a.png"',
    "'b.png'",
    'c.png',
    '"never closed',
    "'never closed",
    '"x>y"',
    '&amp;',
    'url(d.png)',
    'é',
    '\u00a0',
    '==',
    '"',
    "'",
  ];
  const head = ['<img', '<a', '<link', '<div', '<style', '<x' + 'y'.repeat(70), '<IMG', '<image'][next(8)] as string;
  let html = head;
  const count = next(12);
  for (let i = 0; i < count; i++) html += pieces[next(pieces.length)];
  return html;
}

describe('readStartTag', () => {
  it.each([
    '<img src="a.png" alt=x>',
    '<img src = "a.png"/>',
    '<a HREF=\'p.html\' href="second.html">',
    '<div style="left:1px" class="e" id=e1>',
    '<img src= >',
    '<img src="unclosed >',
    "<img src='unclosed>",
    '<img / src=a.png>',
    '<img src=a.png',
    '<img    ',
    '<div a"b=c style=x>',
    '<x' + 'y'.repeat(80) + ' src=a>',
  ])('agrees with the first reader on %j', (html) => {
    expect(readStartTag(html, 0)).toEqual(byPattern(html, 0));
  });

  it('agrees with the first reader on 20,000 pieces of random tag soup', () => {
    for (let seed = 1; seed <= 20_000; seed++) {
      const html = soup(seed);
      expect(readStartTag(html, 0), JSON.stringify(html)).toEqual(byPattern(html, 0));
    }
  });
});
