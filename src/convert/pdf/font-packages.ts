import { execFile } from 'node:child_process';
import { covers } from './system-fonts.js';

/**
 * Fonts that have what the bundled DejaVu Sans lacks, with the Debian package that installs each:
 * what convert names when a binder drew `?`. Each range is one the package's font really covers
 * (test/convert/font-packages.test.ts reads them out of the installed fonts with fc-query), so a
 * character is never sent to a package that would not draw it. Colour emoji fonts are not here: a
 * PDF font program draws outlines, and fonts-noto-color-emoji has bitmaps only.
 */
export interface FontPackage {
  /** The font's family name, to look for on any system. */
  name: string;
  /** The Debian (and Ubuntu) package that installs it. */
  debian: string;
  ranges: readonly (readonly [number, number])[];
}

export const FONT_PACKAGES: readonly FontPackage[] = [
  {
    name: 'Noto Sans CJK',
    debian: 'fonts-noto-cjk',
    // Kangxi radicals, CJK punctuation, kana, bopomofo, hangul jamo, ideographs, hangul, compatibility
    // and full-width forms, enclosed letters.
    ranges: [
      [0x2f00, 0x2fd5],
      [0x3000, 0x303f],
      [0x3041, 0x3096],
      [0x3099, 0x30ff],
      [0x3105, 0x312f],
      [0x3131, 0x318e],
      [0x3190, 0x31bb],
      [0x31f0, 0x321e],
      [0x3220, 0x332b],
      [0x332d, 0x4db5],
      [0x4e00, 0x9fef],
      [0xac00, 0xd7a3],
      [0xf900, 0xfa6d],
      [0xff01, 0xffbe],
      [0x1f110, 0x1f16c],
    ],
  },
  {
    name: 'Symbola',
    debian: 'fonts-symbola',
    // Arrows, technical symbols, dingbats, enclosed letters and the emoji of Unicode 9 (Symbola's last
    // free version).
    ranges: [
      [0x2190, 0x2426],
      [0x2460, 0x2b73],
      [0x1f000, 0x1f02b],
      [0x1f030, 0x1f093],
      [0x1f110, 0x1f12e],
      [0x1f130, 0x1f16b],
      [0x1f300, 0x1f6d4],
      [0x1f6e0, 0x1f6ec],
      [0x1f6f0, 0x1f6f8],
      [0x1f700, 0x1f773],
      [0x1f780, 0x1f7d4],
      [0x1f900, 0x1f90b],
      [0x1f910, 0x1f93e],
      [0x1f940, 0x1f94c],
      [0x1f950, 0x1f96b],
      [0x1f980, 0x1f997],
      [0x1f9c0, 0x1f9c0],
      [0x1f9d0, 0x1f9e6],
    ],
  },
];

/**
 * The font to name for a character no font here has: the first package whose font has it and that
 * is not installed, to install. Failing that, an installed one, said to be installed: its font is
 * on the machine, so the character is missing for another reason (a fontconfig set up without it),
 * which installing it again would not mend.
 */
export function fontFor(
  char: string,
  installed: ReadonlySet<string>,
  packages: readonly FontPackage[] = FONT_PACKAGES,
): (FontPackage & { installed: boolean }) | undefined {
  const code = char.codePointAt(0) as number;
  const having = packages.filter((p) => covers(p.ranges, code));
  const found = having.find((p) => !installed.has(p.debian)) ?? having[0];
  return found === undefined ? undefined : { ...found, installed: installed.has(found.debian) };
}

let cached: Promise<Set<string>> | undefined;

/** dpkg-query from PATH, else where Debian puts it (a PATH may leave /usr/bin out). */
const DPKG_QUERY = ['dpkg-query', '/usr/bin/dpkg-query'];

/**
 * Which of the packages dpkg has installed, asked once per process. Without dpkg (not Debian)
 * none is: the advice names the font, which any system can install, with its Debian package.
 */
export function installedPackages(): Promise<Set<string>> {
  const names = FONT_PACKAGES.map((p) => p.debian);
  cached ??= (async () => {
    for (const command of DPKG_QUERY) {
      const output = await new Promise<string | undefined>((resolve) => {
        // dpkg-query exits 1 when it knows one of the names not at all, and still lists the others.
        execFile(command, ['-W', '-f', DPKG_FORMAT, ...names], (error, stdout) => {
          resolve(error !== null && typeof error.code !== 'number' ? undefined : stdout);
        });
      });
      if (output !== undefined) return parseDpkgStatus(output);
    }
    return new Set<string>();
  })();
  return cached;
}

/** dpkg-query's own field syntax, not a template. */
const DPKG_FORMAT = '${Package}\t${db:Status-Status}\n';

/** `name\tstatus` lines: the names whose status is `installed`. */
export function parseDpkgStatus(output: string): Set<string> {
  const installed = new Set<string>();
  for (const line of output.split('\n')) {
    const [name, status] = line.split('\t');
    if (name !== undefined && name !== '' && status?.trim() === 'installed') installed.add(name);
  }
  return installed;
}
