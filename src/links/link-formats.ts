import {
  apachePattern,
  apacheSubstitution,
  csvField,
  decodedPath,
  ere,
  nginxString,
  plain,
  sedReplacement,
} from './link-quoting.js';
import { newUrl, oldUrl, type LinkRow } from './link-rules.js';

/**
 * The outputs of `links`, each written row by row: csv and json for scripts, a sed script that
 * rewrites old links in text files, and nginx and apache rules that redirect old URLs to the
 * archive's files. Every form drops any query (and with it any api_key, wherever it stood) except
 * the `mode` of the older page views, which picks the file. Every value from the archive is
 * written through link-quoting.ts, by the grammar of where it goes.
 */
export type LinkFormat = 'csv' | 'json' | 'sed' | 'nginx' | 'apache';
export const LINK_FORMATS: readonly LinkFormat[] = ['csv', 'json', 'sed', 'nginx', 'apache'];

export interface LinkWriter {
  start(): string;
  row(row: LinkRow): string;
  /** After each prototype's rows: rules that must stand together are written here. */
  endPrototype(): string;
  end(): string;
}

export interface LinkContext {
  /** The service the archive came from (the manifest's baseUrl). */
  baseUrl: string;
  /** Where the archive's files are served from; undefined leaves entry names. */
  base: string | undefined;
}

export function linkWriter(format: LinkFormat, given: LinkContext): LinkWriter {
  const context = { ...given, baseUrl: plain(given.baseUrl, 'source.baseUrl') };
  switch (format) {
    case 'csv':
      return csvWriter(context);
    case 'json':
      return jsonWriter(context);
    case 'sed':
      return sedWriter(context);
    case 'nginx':
      return nginxWriter(context);
    case 'apache':
      return apacheWriter(context);
  }
}

/** What a row's path is called in a refusal: the entry it came from. */
const sourceOf = (row: LinkRow): string => `the source of ${JSON.stringify(row.target)}`;

function csvWriter({ baseUrl, base }: LinkContext): LinkWriter {
  return {
    start: () => 'kind,url,target\r\n',
    row: (row) =>
      `${row.kind},${csvField(plain(oldUrl(baseUrl, row), sourceOf(row)))},${csvField(newUrl(base, row))}\r\n`,
    endPrototype: () => '',
    end: () => '',
  };
}

function jsonWriter({ baseUrl, base }: LinkContext): LinkWriter {
  let first = true;
  return {
    start: () => '[',
    row: (row) => {
      const url = plain(oldUrl(baseUrl, row), sourceOf(row));
      const line = JSON.stringify({ kind: row.kind, url, target: newUrl(base, row) });
      const out = `${first ? '\n' : ',\n'}${line}`;
      first = false;
      return out;
    },
    endPrototype: () => '',
    end: () => (first ? ']\n' : '\n]\n'),
  };
}

/**
 * A query in running text: up to a space, quote, angle bracket, parenthesis (markdown's `(url)`)
 * or the fragment. It may hold `.,;:!?` (as in `&amp;`) but not end with one: there it is the
 * sentence's punctuation and stays in the text. QUERY is at least one character, so a `?` right
 * after a link without a query stays too. ANY_QUERY is the part before `mode=`, which may end
 * anywhere. AND is the separator of parameters, written `&amp;` in HTML and wiki exports. END is
 * what may follow a URL: the sentence's punctuation, then the end of the link.
 */
const ANY_QUERY = `[^#[:space:]"'<>()]*`;
const QUERY = `[^#[:space:]"'<>()]*[^#[:space:]"'<>().,;:!?]`;
const AND = '&(amp;)?';
const END = `[.,;:!?]*([[:space:]"'<>()]|$)`;

function sedWriter({ baseUrl, base }: LinkContext): LinkWriter {
  const host = `https?://${ere(baseUrl.replace(/^https?:\/\//, '').replace(/\/+$/, ''), 'source.baseUrl')}`;
  const replacement = (row: LinkRow): string => sedReplacement(newUrl(base, row), 'the target');
  return {
    start: () =>
      `# sed -E script from rabbit-export links: rewrites links into ${baseUrl} to the archive's files.\n` +
      `# Use: sed -E -i -f links.sed FILE...  (GNU sed; -i.bak keeps a copy)\n`,
    row: (row) => {
      const path = host + ere(row.path, sourceOf(row));
      if (row.mode !== undefined)
        return `s,${path}\\?(${ANY_QUERY}${AND})?mode=${row.mode}(${AND}${QUERY})?,${replacement(row)},g\n`;
      if (row.kind === 'editor-page')
        return `s,${path}(\\?${QUERY})?${ere(row.fragment ?? '', sourceOf(row))}([^A-Za-z0-9]|$),${replacement(row)}\\2,g\n`;
      // The editor's link to the prototype must not take a longer id, a path or a page fragment
      // for its own: after it (and its query) only END may follow, or else one character that is not
      // an id character. The first rule writes back all of END as \2 (END's own group is \3).
      if (row.kind === 'editor')
        return (
          `s,${path}(\\?${QUERY})?(${END}),${replacement(row)}\\2,g\n` +
          `s,${path}([^#?/=&A-Za-z0-9_[:space:]"'<>()]),${replacement(row)}\\1,g\n`
        );
      return `s,${path}(\\?${QUERY})?,${replacement(row)},g\n`;
    },
    endPrototype: () => '',
    end: () => '',
  };
}

/** A server's rule leads to a path on the same host when no --base was given. */
function serverTarget(base: string | undefined, row: LinkRow): string {
  return base === undefined ? `/${newUrl(undefined, row)}` : newUrl(base, row);
}

/**
 * `location =` blocks for the server block that serves the archive (or answers for the old host):
 * exact matches, so a million of them cost a lookup, not a scan. The page views share their path,
 * so their modes are gathered per prototype into one block that picks by `$arg_mode`.
 */
function nginxWriter({ baseUrl, base }: LinkContext): LinkWriter {
  let views = new Map<string, LinkRow[]>();
  const location = (row: LinkRow): string => nginxString(decodedPath(row.path, sourceOf(row)), sourceOf(row), false);
  const target = (row: LinkRow): string => nginxString(serverTarget(base, row), 'the target', true);
  return {
    start: () =>
      `# nginx rules from rabbit-export links: include inside the server {} block that answers for\n` +
      `# the old links. Each old URL of ${baseUrl} redirects to its file; the query (any api_key) is dropped.\n`,
    row: (row) => {
      if (row.kind === 'editor-page') return ''; // the fragment never reaches a server
      if (row.mode !== undefined) {
        const list = views.get(row.path) ?? [];
        list.push(row);
        views.set(row.path, list);
        return '';
      }
      return `location = ${location(row)} { return 301 ${target(row)}; }\n`;
    },
    endPrototype: () => {
      const out = [...views.values()].map(
        (rows) =>
          `location = ${location(rows[0] as LinkRow)} {\n` +
          rows.map((row) => `    if ($arg_mode = "${row.mode}") { return 301 ${target(row)}; }\n`).join('') +
          '    return 404;\n}\n',
      );
      views = new Map();
      return out.join('');
    },
    end: () => '',
  };
}

function apacheWriter({ baseUrl, base }: LinkContext): LinkWriter {
  return {
    start: () =>
      `# Apache mod_rewrite rules from rabbit-export links: for the server or virtual host config, or\n` +
      `# .htaccess. Each old URL of ${baseUrl} redirects to its file; QSD drops the query (any api_key).\n` +
      'RewriteEngine On\n',
    row: (row) => {
      if (row.kind === 'editor-page') return '';
      // Matched against the decoded path, without its leading slash in .htaccess; NE: the target is
      // a URL already percent-encoded, which Apache would otherwise encode a second time.
      const pattern = apachePattern(decodedPath(row.path, sourceOf(row)).replace(/^\//, ''), sourceOf(row));
      const rule = `RewriteRule ^/?${pattern}$ ${apacheSubstitution(serverTarget(base, row), 'the target')} [R=301,L,QSD,NE]\n`;
      return row.mode === undefined ? rule : `RewriteCond %{QUERY_STRING} (^|&)mode=${row.mode}(&|$)\n${rule}`;
    },
    endPrototype: () => '',
    end: () => '',
  };
}
