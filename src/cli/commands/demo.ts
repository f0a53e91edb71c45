import type { Command } from 'commander';
import { startFakeService } from '../../fake-service/index.js';
import { exportAccount } from '../../export/export-account.js';
import { verifyArchive } from '../../verify/verify-archive.js';
import { listArchive } from '../../verify/list-archive.js';
import { formatListTable, formatVerifyReport } from '../format-archive.js';
import { EXIT } from '../exit-codes.js';
import { mib, seconds } from '../format.js';
import { createProgress, progressMode } from '../progress.js';
import { runAction, withInterrupts, type CliIO } from '../run.js';

export function registerDemo(program: Command, io: CliIO): void {
  program
    .command('demo')
    .description('export the bundled sample service end to end: serve, export, verify, list')
    .option('-o, --out <file.zip>', 'where to write the demo archive (replaced if present)', 'rabbit-demo.zip')
    .addHelpText('after', '\nExample:\n  rabbit-export demo --out /tmp/demo.zip')
    .action((flags: { out: string }) =>
      runAction(io, false, async () => {
        const service = await startFakeService({ seed: 1 });
        const progress = createProgress(progressMode(io.stderr, false), io.stderr);
        const started = Date.now();
        try {
          io.stdout.write(`sample service on ${service.baseUrl}\n`);
          const result = await withInterrupts(io, (signal) =>
            exportAccount({
              out: flags.out,
              baseUrl: service.baseUrl,
              keys: [service.keys.readOnly],
              force: true,
              signal,
              onEvent: progress.onEvent,
            }),
          );
          progress.stop();
          const report = await verifyArchive(result.out);
          io.stdout.write(`${formatListTable(await listArchive(result.out))}\n`);
          io.stdout.write(`${formatVerifyReport(report)}\n`);
          io.stdout.write(
            `exported ${result.prototypes.total} prototypes, ${result.stats.files} files, ` +
              `${mib(result.archiveBytes)} in ${seconds(Date.now() - started)}\n` +
              `archive: ${result.out}\n`,
          );
          if (!report.ok) return EXIT.failed;
          return result.complete ? EXIT.ok : EXIT.incomplete;
        } finally {
          progress.stop();
          await service.close();
        }
      }),
    );
}
