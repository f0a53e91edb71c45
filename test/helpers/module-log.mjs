// Preloaded into a spawned CLI (NODE_OPTIONS=--import=...) by test/cli/startup-modules.test.ts:
// appends the URL of every module the CLI loads to $RABBIT_MODULE_LOG. ES modules are seen by a
// load hook (on the loader thread in Node 20); CommonJS ones, which ES hooks do not see when a
// package requires its own files, are read from the require cache at exit.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';

const log = process.env.RABBIT_MODULE_LOG;

if (isMainThread && log) {
  register(import.meta.url);
  process.on('exit', () => {
    const required = Object.keys(createRequire(import.meta.url).cache).map((path) => pathToFileURL(path).href);
    appendFileSync(log, required.map((url) => `${url}\n`).join(''));
  });
}

export async function load(url, context, nextLoad) {
  if (log) appendFileSync(log, `${url}\n`);
  return nextLoad(url, context);
}
