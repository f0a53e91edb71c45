import { EXIT } from './exit-codes.js';
import { keepHeapNearLive } from './heap-growth.js';
import { runProgram } from './program.js';

keepHeapNearLive();

// `rabbit-export ls big.zip | head` closes the pipe early: that is the reader's choice, not an error.
// Any other failure to write (`> /dev/full`, a full disk behind a redirect) ends the run with exit
// 1 and, when it was stdout that failed, says so on stderr in a line rather than a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    if (stream === process.stdout) {
      const why = WRITE_FAILURES[error.code ?? ''] ?? error.message;
      process.stderr.write(`rabbit-export: cannot write to stdout: ${why}; what was written is not whole\n`);
    }
    process.exit(EXIT.failed);
  });
}

const WRITE_FAILURES: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is used up',
  EIO: 'an input/output error',
  EBADF: 'stdout is closed',
};

// Called without top-level await: the single-file executable (scripts/package.mjs) runs this
// module bundled as CommonJS, which has none.
void runProgram(process.argv, { stdout: process.stdout, stderr: process.stderr, env: process.env });
