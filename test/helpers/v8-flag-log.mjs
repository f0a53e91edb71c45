// Preloaded into a spawned CLI (NODE_OPTIONS=--import=...) by test/cli/heap-settings.test.ts:
// appends every flag the CLI hands to V8 at run time (v8.setFlagsFromString) to $RABBIT_V8_FLAG_LOG.
import { appendFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const log = process.env.RABBIT_V8_FLAG_LOG;
if (log) {
  const v8 = createRequire(import.meta.url)('node:v8');
  const original = v8.setFlagsFromString;
  v8.setFlagsFromString = (flags) => {
    appendFileSync(log, `${flags}\n`);
    original(flags);
  };
  // ES modules importing node:v8 see the wrapper too.
  syncBuiltinESMExports();
}
