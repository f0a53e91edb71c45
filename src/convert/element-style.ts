/**
 * The part of an element's own `style` that draw.io can show: fill, opacity and font. The service
 * never documented its style attributes, so common spellings are accepted (an object such as
 * `{"fill": "#ffcc00", "fontSize": 14}` or CSS text such as `"background-color: #fc0; opacity: .5"`),
 * and any value that could break out of a draw.io style string (`;`, `=`) is ignored.
 */
type StyleKey = 'fillColor' | 'opacity' | 'fontFamily' | 'fontSize' | 'fontColor' | 'fontStyle';

const NAMES: Readonly<Record<string, StyleKey>> = {
  fill: 'fillColor',
  fillcolor: 'fillColor',
  background: 'fillColor',
  backgroundcolor: 'fillColor',
  opacity: 'opacity',
  font: 'fontFamily',
  fontfamily: 'fontFamily',
  fontsize: 'fontSize',
  color: 'fontColor',
  fontcolor: 'fontColor',
  textcolor: 'fontColor',
  fontweight: 'fontStyle',
  fontstyle: 'fontStyle',
};

const COLOR = /^(?:#[0-9a-f]{3}|#[0-9a-f]{6}|[a-z]+|none)$/i;
const FAMILY = /^[\p{L}\p{N} ,'"._-]{1,100}$/u;

/** `key=value;` pairs to append after the type's style; empty when the element has no style. */
export function drawioStyleOf(style: unknown): string {
  const found: Partial<Record<StyleKey, string>> = {};
  let bold = false;
  let italic = false;
  for (const [rawName, rawValue] of entriesOf(style)) {
    const key = NAMES[rawName.toLowerCase().replace(/[\s_-]+/g, '')];
    const value =
      typeof rawValue === 'number' ? String(rawValue) : typeof rawValue === 'string' ? rawValue.trim() : undefined;
    if (key === undefined || value === undefined || /[;=]/.test(value)) continue;
    if (key === 'fillColor' || key === 'fontColor') {
      if (COLOR.test(value)) found[key] = value;
    } else if (key === 'opacity') {
      const percent = opacityPercent(value);
      if (percent !== undefined) found.opacity = String(percent);
    } else if (key === 'fontSize') {
      const size = Number.parseFloat(value);
      if (Number.isFinite(size) && size > 0 && size < 1000) found.fontSize = String(size);
    } else if (key === 'fontFamily') {
      if (FAMILY.test(value)) found.fontFamily = value.replace(/["']/g, '');
    } else {
      bold ||= /bold|^[6-9]00$/i.test(value);
      italic ||= /italic|oblique/i.test(value);
    }
  }
  if (bold || italic) found.fontStyle = String((bold ? 1 : 0) | (italic ? 2 : 0));
  return Object.entries(found)
    .map(([key, value]) => `${key}=${value};`)
    .join('');
}

/** 0..1 as a fraction, 1..100 or "50%" as percent: draw.io wants 0..100. */
function opacityPercent(value: string): number | undefined {
  const number = Number.parseFloat(value);
  if (!Number.isFinite(number) || number < 0) return undefined;
  const percent = value.endsWith('%') || number > 1 ? number : number * 100;
  return Math.min(100, Math.round(percent));
}

function entriesOf(style: unknown): [string, unknown][] {
  if (typeof style === 'string') {
    return style
      .split(';')
      .map((part) => part.split(':'))
      .filter((pair): pair is [string, string] => pair.length === 2)
      .map(([name, value]) => [name.trim(), value]);
  }
  if (typeof style === 'object' && style !== null && !Array.isArray(style)) return Object.entries(style);
  return [];
}
