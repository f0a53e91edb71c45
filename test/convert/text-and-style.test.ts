import { describe, expect, it } from 'vitest';
import { drawioStyleOf } from '../../src/convert/element-style.js';
import { GENERIC_STYLE, SHAPE_TABLE, shapeFor } from '../../src/convert/shape-table.js';
import { XmlText } from '../../src/convert/xml-text.js';

describe('XmlText', () => {
  it.each([
    ['plain', 'plain', 0],
    [`<b>Checkout</b> & "Pay" 'now'`, `&lt;b&gt;Checkout&lt;/b&gt; &amp; &quot;Pay&quot; 'now'`, 0],
    ['line 1\nline 2\r\n\tend', 'line 1&#xa;line 2&#xd;&#xa;&#x9;end', 0],
    ['Start – Übersicht 🏠 日本語', 'Start – Übersicht 🏠 日本語', 0],
    ['a\u0000b\u0008c\u001fd\u007fe', 'abcd\u007fe', 3],
    ['x\uFFFE\uFFFFy\uFFFDz', 'xy\uFFFDz', 2],
    ['lone \uD800 high, lone \uDC00 low, pair \uD83D\uDE80', 'lone  high, lone  low, pair 🚀', 2],
  ])('%j becomes %j, dropping %i', (input, output, dropped) => {
    const text = new XmlText();
    expect(text.attr(input)).toBe(output);
    expect(text.dropped).toBe(dropped);
  });

  it('counts what it drops from one source once, however often that text is written', () => {
    const text = new XmlText();
    for (let i = 0; i < 3; i++) expect(text.attr('a\u0001b\uFFFE', 'pages/page1.json name')).toBe('ab');
    expect(text.dropped).toBe(2);
    text.attr('a\u0001b', 'pages/page2.json name');
    text.attr('\u0001');
    text.attr('\u0001');
    expect(text.dropped).toBe(5);
  });

  it('keeps JSON whole: U+FFFE inside a string becomes its escape, nothing is dropped', () => {
    const text = new XmlText();
    const raw = JSON.stringify({ text: 'a\uFFFEb <c> & "d"\n' });
    const attr = text.json(raw);
    expect(attr).toBe('{&quot;text&quot;:&quot;a\\ufffeb &lt;c&gt; &amp; \\&quot;d\\&quot;\\n&quot;}');
    expect(text.dropped).toBe(0);
  });
});

describe('the shape table', () => {
  it.each([
    ['button', 'shape=mxgraph.mockup.buttons.button;'],
    ['checkbox', 'shape=mxgraph.mockup.forms.checkbox;'],
    ['ComboBox', 'shape=mxgraph.mockup.forms.comboBox;'],
    ['drop-down', 'shape=mxgraph.mockup.forms.comboBox;'],
    ['image', 'shape=mxgraph.mockup.graphics.simpleIcon;'],
    ['headline', 'fontStyle=1;'],
    ['text_field', 'spacingLeft=4;'],
  ])('%j maps to a style with %j', (type, part) => {
    const choice = shapeFor(type);
    expect(choice.mapped).toBe(true);
    expect(choice.style).toContain(part);
  });

  it('maps an unknown type to the generic rectangle', () => {
    expect(shapeFor('carousel')).toEqual({ style: GENERIC_STYLE, mapped: false });
  });

  it('writes only key=value; pairs, never html labels', () => {
    for (const style of [...Object.values(SHAPE_TABLE), GENERIC_STYLE]) {
      expect(style).toMatch(/^(?:[A-Za-z0-9]+(?:=[^;=]*)?;)+$/);
      expect(style).not.toContain('html=1');
    }
  });
});

describe('drawioStyleOf', () => {
  it.each([
    [undefined, ''],
    [{ fill: '#ffcc00' }, 'fillColor=#ffcc00;'],
    [{ backgroundColor: 'red', opacity: 0.25 }, 'fillColor=red;opacity=25;'],
    [{ opacity: 40 }, 'opacity=40;'],
    [{ opacity: '60%' }, 'opacity=60;'],
    [
      { fontFamily: '"Open Sans", Arial', 'font-size': '13px', color: '#123' },
      'fontFamily=Open Sans, Arial;fontSize=13;fontColor=#123;',
    ],
    [{ fontWeight: 700, fontStyle: 'italic' }, 'fontStyle=3;'],
    ['background: #fff; opacity: .5; font-weight: bold', 'fillColor=#fff;opacity=50;fontStyle=1;'],
    // Anything that could break out of the style string, or is not a colour, is ignored.
    [{ fill: '#fff;shape=image', fontFamily: 'x=1', color: 'url(evil)', opacity: -1, fontSize: 0 }, ''],
    [['fill', '#fff'], ''],
  ])('%j -> %j', (style, expected) => {
    expect(drawioStyleOf(style)).toBe(expected);
  });
});
