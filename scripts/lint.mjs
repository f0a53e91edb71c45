// ESLint as `npm test` runs it: every file `eslint .` lints, except the files whose result cannot
// have changed since they last linted clean. The type-aware rules (eslint.config.js) make a whole
// run cost half a minute of CPU, most of it the type checker; an unchanged file is skipped only
// when nothing its types can come from has changed either:
//
//   - its own text, and the text of every file of this repository it imports, however deep
//     (a function that now returns a promise makes an unchanged caller's call float);
//   - the ESLint and TypeScript configs, every declaration file and declaration of a module or
//     global (`declare`), and both package-lock.json files (the rules, the parser, the types of
//     every dependency).
//
// What linted clean is kept in node_modules/.cache, so a clean checkout lints everything, as
// `npm run lint` (plain `eslint .`) always does. A file with any message is linted again next time.
//
//   node scripts/lint.mjs
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STORE = join(ROOT, 'node_modules/.cache/rabbit-export/lint-clean.json');
/** Files every file's types may depend on, besides those it imports. */
const SHARED = [
  'eslint.config.js',
  'tsconfig.json',
  'src/site/browser/tsconfig.json',
  'package-lock.json',
  'test/browser/package-lock.json',
];
const LINTED = /\.(?:[cm]?js|ts)$/;
/** Relative specifiers of static imports, re-exports, side-effect imports and literal dynamic imports. */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

const eslint = new ESLint({ cwd: ROOT });

/** What `eslint .` would lint, or undefined outside a git checkout (then everything is linted). */
async function lintedFiles() {
  let listed;
  try {
    listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return undefined;
  }
  const files = [];
  for (const file of listed.split('\0')) {
    if (!LINTED.test(file) || !existsSync(join(ROOT, file)) || (await eslint.isPathIgnored(join(ROOT, file)))) continue;
    files.push(file);
  }
  return files;
}

const texts = new Map();
function text(file) {
  if (!texts.has(file)) texts.set(file, existsSync(join(ROOT, file)) ? readFileSync(join(ROOT, file)) : null);
  return texts.get(file);
}

/** The repository files `file` imports directly; `./x.js` is `./x.ts` when only that exists (NodeNext). */
function imports(file) {
  const source = text(file)?.toString('utf8') ?? '';
  const found = new Set();
  for (const [, specifier] of source.matchAll(IMPORT)) {
    const target = relative(ROOT, resolve(ROOT, dirname(file), specifier));
    const candidates = [target, target.replace(/\.([cm]?)js$/, '.$1ts'), `${target}.ts`, join(target, 'index.ts')];
    const hit = candidates.find((candidate) => text(candidate) !== null);
    if (hit !== undefined) found.add(hit);
  }
  return found;
}

/** `file` and everything it imports, however deep. */
function closure(file) {
  const seen = new Set([file]);
  const queue = [file];
  while (queue.length > 0) {
    for (const next of imports(queue.pop())) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return [...seen].sort();
}

function digest(files) {
  const hash = createHash('sha256');
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(text(file) ?? '\0missing\0')
      .update('\0');
  return hash.digest('hex');
}

function load() {
  try {
    return JSON.parse(readFileSync(STORE, 'utf8'));
  } catch {
    return {};
  }
}

const files = await lintedFiles();
if (files === undefined) {
  const results = await eslint.lintFiles(['.']);
  process.stdout.write(await (await eslint.loadFormatter('stylish')).format(results));
  process.exitCode = ESLint.getErrorResults(results).length > 0 ? 1 : 0;
} else {
  // Every declaration file, and every module that declares a module or a global: types any file may see unimported.
  const declarations = files.filter(
    (file) => file.endsWith('.d.ts') || /^\s*declare\s+(?:global|module)\b/m.test(text(file)?.toString() ?? ''),
  );
  const shared = digest([...SHARED, ...declarations]);
  const keys = new Map(files.map((file) => [file, `${shared}:${digest(closure(file))}`]));
  const clean = load();
  const stale = files.filter((file) => clean[file] !== keys.get(file));
  const results = stale.length > 0 ? await eslint.lintFiles(stale.map((file) => join(ROOT, file))) : [];
  process.stdout.write(await (await eslint.loadFormatter('stylish')).format(results));
  const kept = {};
  for (const file of files) if (clean[file] === keys.get(file)) kept[file] = clean[file];
  for (const result of results) {
    const file = relative(ROOT, result.filePath);
    if (result.messages.length === 0 && keys.has(file)) kept[file] = keys.get(file);
  }
  // Written whole or not at all: a run stopped half way must not leave a store that says too much.
  mkdirSync(dirname(STORE), { recursive: true });
  writeFileSync(`${STORE}.${process.pid}`, JSON.stringify(kept));
  renameSync(`${STORE}.${process.pid}`, STORE);
  process.exitCode = results.some((result) => result.errorCount > 0 || result.fatalErrorCount > 0) ? 1 : 0;
}
