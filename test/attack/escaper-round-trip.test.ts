import { execFileSync } from 'node:child_process';
import { parseFragment } from 'parse5';
import { beforeAll, describe, expect, it } from 'vitest';
import { escapeAttribute, escapeText, xmlCharsOf } from '../../src/core/xml-escape.js';
import { requireTool, python } from '../helpers/tools.js';

/** Values a hostile service or archive may hold, each aimed at one way out of its context. */
const HOSTILE = [
  ']]>',
  'a]]>b<![CDATA[c',
  '</script><script>alert(1)</script>',
  '</title><img src=x onerror=alert(1)>',
  '"><svg onload=alert(1)>',
  "' onmouseover='alert(1)",
  '&amp;&lt;&#x3c;&#60;',
  '<!-- --><?xml?>',
  'line\u2028sep\u2029para',
  'lone \ud800 high, lone \udc00 low, pair \ud83d\ude00',
  'cr\r lf\n crlf\r\n tab\t',
  'nul\u0000 bel\u0007 esc\u001b del\u007f c1\u0085\u009b',
  'nonchars \ufffe \uffff end',
  '\u202eevil\u202c',
];

/** Python's ElementTree (expat) reads each document: the element's text and its attribute. */
const READ_XML = `
import json, sys
import xml.etree.ElementTree as ET
out = []
for doc in json.load(sys.stdin):
    e = ET.fromstring(doc)
    out.append([e.text or '', e.get('v')])
sys.stdout.write(json.dumps(out))
`;

function throughPython(docs: string[]): Array<[string, string]> {
  const out = execFileSync(python(), ['-c', READ_XML], { input: JSON.stringify(docs) });
  return JSON.parse(out.toString('utf8')) as Array<[string, string]>;
}

beforeAll(() => requireTool('python3'));

describe('the one escaper against values made to break out', () => {
  it('an XML parser reads back exactly the characters XML can hold, in content and in an attribute', () => {
    const docs = HOSTILE.map((value) => `<e v="${escapeAttribute(value)}">${escapeText(value)}</e>`);
    const read = throughPython(docs);
    expect(read).toEqual(HOSTILE.map((value) => [xmlCharsOf(value).kept, xmlCharsOf(value).kept]));
  });

  it('an HTML parser reads back the same, and finds one element with one attribute: nothing broke out', () => {
    for (const value of HOSTILE) {
      const fragment = parseFragment(`<p title="${escapeAttribute(value)}">${escapeText(value)}</p>`);
      const [p, ...rest] = fragment.childNodes;
      expect(rest).toEqual([]);
      if (p === undefined || !('tagName' in p)) throw new Error(`no element for ${JSON.stringify(value)}`);
      expect(p.tagName).toBe('p');
      expect(p.attrs).toEqual([{ name: 'title', value: xmlCharsOf(value).kept }]);
      const texts = p.childNodes.map((node) => ('value' in node && node.nodeName === '#text' ? node.value : '<node>'));
      expect(texts.join('')).toBe(xmlCharsOf(value).kept);
    }
  });

  it('drops lone surrogates and noncharacters rather than writing them, and keeps pairs', () => {
    expect(xmlCharsOf('a\ud800b\udc00c\ud83d\ude00\ufffe').kept).toBe('abc\ud83d\ude00');
    expect(escapeText('\u2028]]>')).toBe('\u2028]]&gt;');
  });
});
