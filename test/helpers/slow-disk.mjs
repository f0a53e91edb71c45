// Preloaded into a spawned CLI (NODE_OPTIONS=--import=...) by the progress tests: every file read
// waits $RABBIT_SLOW_DISK_MS first, as on a slow network share. A command over the small sample
// archive then runs for seconds, for certain, and its progress display can be watched as a user
// of a big archive sees it; the CLI itself is unchanged. Reads every way files are read: the
// callback fs.read under read streams, FileHandle.read, and readSync (the zip reader's small
// entries), which blocks the thread as a slow disk would.
import fs from 'node:fs';
import { open } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const delay = Number(process.env.RABBIT_SLOW_DISK_MS ?? 0);

if (isMainThread && delay > 0) {
  const read = fs.read;
  fs.read = function (...args) {
    setTimeout(() => read.apply(this, args), delay);
  };
  const handle = await open(process.execPath);
  const FileHandle = Object.getPrototypeOf(handle);
  await handle.close();
  const readSync = fs.readSync;
  const blocked = new Int32Array(new SharedArrayBuffer(4));
  fs.readSync = function (...args) {
    Atomics.wait(blocked, 0, 0, delay);
    return readSync.apply(this, args);
  };
  // Named imports of node:fs (import { readSync } from 'node:fs') see the replacements too.
  syncBuiltinESMExports();
  const handleRead = FileHandle.read;
  FileHandle.read = async function (...args) {
    await new Promise((resolve) => setTimeout(resolve, delay));
    return handleRead.apply(this, args);
  };
}
