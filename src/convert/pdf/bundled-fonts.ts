import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { getAsset, isSea } from 'node:sea';
import { create } from 'fontkit';
import type { FontFace, FontFaces } from './system-fonts.js';

/**
 * DejaVu Sans, regular and bold, carried by rabbit-export itself: from the dejavu-fonts-ttf package
 * in the npm build, from the executable's own assets in the single executable (scripts/package.mjs
 * puts them there under these names). It is the first face of every binder, so that Latin, Greek,
 * Cyrillic, Hebrew and Arabic (shaped by its OpenType tables) draw the same on every machine, with
 * or without fontconfig; the machine's fonts come after it for what it lacks (CJK, emoji). Its
 * licence (Bitstream Vera's, the DejaVu changes in the public domain) is in each file's name table.
 */
const BUNDLED_FONT_FILES = { regular: 'DejaVuSans.ttf', bold: 'DejaVuSans-Bold.ttf' } as const;

let cached: FontFaces | undefined;

/** Read once per process: about 1.4 MB, and a binder embeds only the glyphs it draws. */
export function bundledFonts(): FontFaces {
  cached ??= { regular: [bundledFace(BUNDLED_FONT_FILES.regular)], bold: [bundledFace(BUNDLED_FONT_FILES.bold)] };
  return cached;
}

function bundledFace(name: string): FontFace {
  const bytes = fontBytes(name);
  const font = create(bytes);
  return {
    file: `bundled ${name}`,
    index: 0,
    postscriptName: font.postscriptName,
    ranges: rangesOf(font.characterSet),
    read: () => bytes,
  };
}

function fontBytes(name: string): Uint8Array {
  if (isSea()) return new Uint8Array(getAsset(name));
  return readFileSync(createRequire(import.meta.url).resolve(`dejavu-fonts-ttf/ttf/${name}`));
}

/** Sorted code points as inclusive ranges, the form fontconfig's character sets take. */
function rangesOf(codePoints: readonly number[]): [number, number][] {
  const ranges: [number, number][] = [];
  for (const code of [...codePoints].sort((a, b) => a - b)) {
    const last = ranges.at(-1);
    if (last !== undefined && code <= last[1] + 1) last[1] = Math.max(last[1], code);
    else ranges.push([code, code]);
  }
  return ranges;
}
