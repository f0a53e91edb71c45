// Preloaded with `node --import` into a measured command: when the process exits, however it
// exits, its own getrusage (CPU of every thread, peak RSS) is written where the bench asked.
// Node cannot read a child's rusage, and /usr/bin/time's output format is not portable.
import { writeFileSync } from 'node:fs';

const target = process.env.RABBIT_BENCH_USAGE_FILE;
if (target) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(
      target,
      JSON.stringify({ userUs: usage.userCPUTime, systemUs: usage.systemCPUTime, maxRssKiB: usage.maxRSS }),
    );
  });
}
