// Shows: CSS Chromium reads differently from view-css.ts (CR/FF-ended strings, UTF-16 or ISO-2022-JP sheets) and a srcset with nested parentheses make a view load files outside the extraction.
import { describeSheetAttack, type Variant } from './sheet-attack.js';

/**
 * Pages and stylesheets that the view's CSS reader (view-css.ts) reads differently from Chromium's
 * CSS tokenizer and srcset parser, exported through the tool and opened from the unzipped archive:
 * every reference a browser takes from them must stay inside the extraction. Each variant names a
 * file beside the extracted folder; a view that asks for it loads from outside the archive.
 */

/** From a view (`prototypes/N/rM/pages/x.view.html`) to a file beside the extracted folder. */
const FROM_VIEW = '../../../../../outside.png';
/** From an archived stylesheet (`assets/x.css`) to the same file. */
const FROM_ASSET = '../../outside.png';

const utf16le = (text: string): Buffer => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);

/** Stylesheets the front serves, by path: each holds no reference view-css.ts can see, and one Chromium loads. */
const SHEETS: ReadonlyMap<string, Buffer> = new Map([
  // A CR ends a CSS string (CSS preprocessing makes it a newline); view-css.ts's string runs on to the next quote.
  ['/cr-string.css', Buffer.from(`.cr-string{content:"x\r;background:url(${FROM_ASSET}?cr)}"}`, 'latin1')],
  // The same with a form feed.
  ['/ff-string.css', Buffer.from(`.ff-string{content:"x\f;background:url(${FROM_ASSET}?ff)}"}`, 'latin1')],
  // The same in a sheet with a reference of its own: the copy made of it keeps the hidden one, and its check passes it.
  [
    '/cr-copy.css',
    Buffer.from(
      `.cr-copy{border-image:url(/static/a.png)}.cr-copy{content:"x\r;background:url(${FROM_ASSET}?copy)}"}`,
      'latin1',
    ),
  ],
  // An @import so hidden: a stylesheet from outside the archive, which may load anything in turn.
  ['/cr-import.css', Buffer.from(`"x\r{}@import url(${FROM_ASSET}?import);"{}.cr-import{color:red}`, 'latin1')],
  // A UTF-16 byte order mark: Chromium reads the sheet as UTF-16; view-css.ts reads its bytes as latin1.
  ['/utf16.css', utf16le(`.utf16{background:url(${FROM_ASSET}?utf16)}`)],
  // @charset names ISO-2022-JP, whose escape sequence ESC ( B vanishes in decoding: `u ESC(B rl(` is `url(`.
  [
    '/iso2022jp.css',
    Buffer.from(`@charset "iso-2022-jp";.iso2022jp{background:u\x1b(Brl(${FROM_ASSET}?jis)}`, 'latin1'),
  ],
]);

const VARIANTS: Variant[] = [
  ...[...SHEETS.keys()].map((path) => {
    const name = path.slice(1, -'.css'.length);
    return { name: `sheet-${name}`, body: `<link rel="stylesheet" href="${path}"><div class="${name}">${name}</div>` };
  }),
  // A form feed ends the string in a page's own <style>: the declaration after it is read by Chromium alone.
  {
    name: 'style-ff-string',
    body: `<style>.z{content:"a\f;background:url(${FROM_VIEW}?style-ff)}"}</style><div class="z">z</div>`,
  },
  // srcset: view's splitter nests parentheses in a descriptor, the HTML algorithm does not: a second candidate appears.
  { name: 'srcset-nested-parens', body: `<img srcset="/static/a.png 1x((),${FROM_VIEW}?srcset,)">` },
];

describeSheetAttack('CSS and srcset read differently by the view and by Chromium', {
  name: 'view-css-newlines',
  sheets: SHEETS,
  variants: VARIANTS,
});
