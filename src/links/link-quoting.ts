import { RabbitError } from '../core/errors.js';
import { controlIn } from '../manifest/manifest-values.js';

/**
 * How a value from the archive is written into each output of `links`, by that output's own
 * grammar. The manifest's values were checked as it was read (manifest/manifest-values.ts); these
 * are the last line: whatever a format cannot hold as data (a line break ends an nginx or Apache
 * directive, a sed command, a comment) is refused here, never written.
 */

/**
 * Format characters but the zero-width joiner: a bidi override or isolate reorders how a rule or a
 * row reads on a terminal or in an editor (`p\u202Eon.json` shows as `pnoj.json`), so a rule
 * could read as another.
 */
const FORMAT = /(?!\u200d)\p{Cf}/u;

/** Refuses a value holding a control or format character: no output format of `links` may carry one as data. */
export function plain(value: string, what: string): string {
  const control = controlIn(value) ?? formatIn(value);
  if (control !== undefined) {
    throw new RabbitError(
      'ARCHIVE_CORRUPT',
      `${what} holds a control character (${control}); no rule or script is written for an archive that carries one`,
      { reason: `${what} holds a control character` },
    );
  }
  return value;
}

function formatIn(value: string): string | undefined {
  const found = FORMAT.exec(value)?.[0].codePointAt(0);
  return found === undefined ? undefined : `U+${found.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * The path a server compares: nginx's `location` and a RewriteRule's pattern see the request's
 * path percent-decoded, so a source `/a%20b.css` is matched as `/a b.css`. A path whose escapes do
 * not decode to UTF-8 text is left as written (its rule then never matches, which is harmless);
 * one that decodes to a control character is refused.
 */
export function decodedPath(path: string, what: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    decoded = path;
  }
  return plain(decoded, `${what} (percent-decoded)`);
}

/**
 * An nginx string in double quotes: `\` and `"` are escaped (the parser takes `\"` and `\\`), and
 * everything else, `;`, `{`, `}` and `#` included, is part of the string. `$` would start a
 * variable where the string is a script (`return`): there, a URL's `$` is written `%24`, the same
 * URL; in `location` nothing is a variable, so it stays as it is.
 */
export function nginxString(value: string, what: string, script: boolean): string {
  const text = plain(value, what).replace(/[\\"]/g, '\\$&');
  return `"${script ? text.replace(/\$/g, '%24') : text}"`;
}

/**
 * A RewriteRule pattern (PCRE) matching exactly `text`: every metacharacter escaped, and the
 * characters Apache's argument reader would take for the end of the argument or a quote (space,
 * tab, `"`, `'`) written as `\xHH`, byte by byte as PCRE reads the UTF-8 path, so the argument stays
 * one word.
 */
export function apachePattern(text: string, what: string): string {
  return plain(text, what)
    .replace(/[.[\]()*+?{}|^$\\]/g, '\\$&')
    .replace(/[\s"']/g, (c) =>
      [...Buffer.from(c, 'utf8')].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join(''),
    );
}

/**
 * A RewriteRule substitution: `$` and `%` would name back-references or variables and `\` escapes
 * them; a URL holds no space or quote (it is percent-encoded), so one that does is refused.
 */
export function apacheSubstitution(value: string, what: string): string {
  if (/[\s"']/.test(plain(value, what))) {
    throw new RabbitError('ARCHIVE_CORRUPT', `${what} holds a space or a quote, which a RewriteRule cannot hold`, {
      reason: `${what} holds a space or a quote`,
    });
  }
  return value.replace(/[\\$%]/g, '\\$&');
}

/** POSIX extended regular expression for `sed -E`, with `,` as the s command's delimiter. */
export function ere(text: string, what: string): string {
  return plain(text, what).replace(/[.[\]()*+?{}|^$\\,]/g, '\\$&');
}

/** The replacement of an s command: `&` is the match, `\` escapes, `,` would end it. */
export function sedReplacement(text: string, what: string): string {
  return plain(text, what).replace(/[\\&,]/g, '\\$&');
}

/**
 * An RFC 4180 field, defused for spreadsheets: a cell starting with `=`, `+`, `-`, `@` (or a tab
 * or carriage return, which some of them skip) would be taken for a formula, so it gets a leading
 * `'` (OWASP's CSV injection advice); a field with a quote, comma or line end is quoted.
 */
export function csvField(value: string): string {
  const cell = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}
