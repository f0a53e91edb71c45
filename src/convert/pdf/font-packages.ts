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
  {
    name: 'Noto Sans and Serif of each script',
    debian: 'fonts-noto-core',
    // The scripts of South and South-East Asia, Tibetan, Ethiopic, Cherokee, Canadian syllabics,
    // Mongolian, Syriac, Thaana, Javanese, Balinese and cuneiform, as the package's fonts have them
    // (hexadecimal code points and ranges).
    ranges: hexRanges(
      '700-70d 70f-74a 74d-74f 780-7b1 900-97f 980-983 985-98c 98f-990 993-9a8 9aa-9b0 9b2 ' +
        '9b6-9b9 9bc-9c4 9c7-9c8 9cb-9ce 9d7 9dc-9dd 9df-9e3 9e6-9fe a01-a03 a05-a0a a0f-a10 ' +
        'a13-a28 a2a-a30 a32-a33 a35-a36 a38-a39 a3c a3e-a42 a47-a48 a4b-a4d a51 a59-a5c a5e ' +
        'a66-a76 a81-a83 a85-a8d a8f-a91 a93-aa8 aaa-ab0 ab2-ab3 ab5-ab9 abc-ac5 ac7-ac9 acb-acd ' +
        'ad0 ae0-ae3 ae6-af1 af9-aff b01-b03 b05-b0c b0f-b10 b13-b28 b2a-b30 b32-b33 b35-b39 ' +
        'b3c-b44 b47-b48 b4b-b4d b56-b57 b5c-b5d b5f-b63 b66-b77 b82-b83 b85-b8a b8e-b90 b92-b95 ' +
        'b99-b9a b9c b9e-b9f ba3-ba4 ba8-baa bae-bb9 bbe-bc2 bc6-bc8 bca-bcd bd0 bd7 be6-bfa ' +
        'c00-c0c c0e-c10 c12-c28 c2a-c39 c3d-c44 c46-c48 c4a-c4d c55-c56 c58-c5a c60-c63 c66-c6f ' +
        'c77-c7f c80-c8c c8e-c90 c92-ca8 caa-cb3 cb5-cb9 cbc-cc4 cc6-cc8 cca-ccd cd5-cd6 cde ' +
        'ce0-ce3 ce6-cef cf1-cf2 d00-d0c d0e-d10 d12-d44 d46-d48 d4a-d4f d54-d63 d66-d7f d81-d83 ' +
        'd85-d96 d9a-db1 db3-dbb dbd dc0-dc6 dca dcf-dd4 dd6 dd8-ddf de6-def df2-df4 e01-e3a ' +
        'e3f-e5b e81-e82 e84 e86-e8a e8c-ea3 ea5 ea7-ebd ec0-ec4 ec6 ec8-ecd ed0-ed9 edc-edf ' +
        'f00-f47 f49-f6c f71-f97 f99-fbc fbe-fcc fce-fda 1000-109f 1200-1248 124a-124d 1250-1256 ' +
        '1258 125a-125d 1260-1288 128a-128d 1290-12b0 12b2-12b5 12b8-12be 12c0 12c2-12c5 ' +
        '12c8-12d6 12d8-1310 1312-1315 1318-135a 135d-137c 1380-1399 13a0-13f5 13f8-13fd ' +
        '1400-167f 1780-17dd 17e0-17e9 17f0-17f9 1800-180e 1810-1819 1820-1878 1880-18aa ' +
        '1b00-1b4b 1b50-1b7c a980-a9cd a9cf-a9d9 a9de-a9df 12000-12399',
    ),
  },
];

/** `'e01-e3a e3f'` -> [[0xe01, 0xe3a], [0xe3f, 0xe3f]]: long tables of ranges, kept readable. */
function hexRanges(text: string): [number, number][] {
  return text
    .trim()
    .split(/\s+/)
    .map((range) => {
      const [first = '', last = first] = range.split('-');
      return [parseInt(first, 16), parseInt(last, 16)];
    });
}

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
