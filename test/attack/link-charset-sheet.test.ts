// Guards: a <link charset> in a page must not make Chromium decode a raw stylesheet (no copy made) as Shift_JIS, where it would load a file outside the extraction that the UTF-8 reading holds in a string (views drop the attribute).
import { describeSheetAttack, type Variant } from './sheet-attack.js';

/**
 * A stylesheet the view loads raw (it holds no reference read as UTF-8, so no copy is made) from a
 * `<link>` with a `charset` attribute, were the view to keep it: Chromium decodes a sheet with neither byte
 * order mark nor @charset in that encoding (file:// sends no charset), stylesheetText() in UTF-8.
 * The variant without the attribute is the control.
 */

/** From an archived stylesheet (`assets/x.css`) to the same file. */
const FROM_ASSET = '../../outside.png';

/**
 * A sheet that holds no reference as its bytes read in UTF-8 (one string from `"a` to the last `"`),
 * and one in Shift_JIS: there 0x81 0x5C is one character, the backslash no escape, and the quote
 * after it ends the string, so the `url()` is a declaration's.
 */
const SJIS_SHEET = Buffer.from(
  `.sjis{content:"a\x81\\";background:url(${FROM_ASSET}?link-charset);content:"}`,
  'latin1',
);

const SHEETS: ReadonlyMap<string, Buffer> = new Map([['/sjis.css', SJIS_SHEET]]);

const VARIANTS: Variant[] = [
  // Chromium decodes a sheet with neither byte order mark nor @charset in the encoding its <link charset> names.
  {
    name: 'link-charset',
    body: `<link rel="stylesheet" href="/sjis.css" charset="shift_jis"><div class="sjis">sjis</div>`,
  },
  // The same sheet without the attribute: read as UTF-8 by both, it loads nothing.
  { name: 'no-charset', body: `<link rel="stylesheet" href="/sjis.css"><div class="sjis">sjis</div>` },
];

describeSheetAttack('a stylesheet decoded by the encoding a <link charset> names', {
  name: 'link-charset',
  sheets: SHEETS,
  variants: VARIANTS,
});
