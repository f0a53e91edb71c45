import type { Command } from 'commander';
import type { FakeStore } from '../../fake-service/index.js';
import { mib, plural, printable, seconds } from '../format.js';
import { EXIT } from '../exit-codes.js';
import { runAction, withInterrupts, type CliIO } from '../run.js';

export function registerDemo(program: Command, io: CliIO): void {
  program
    .command('demo')
    .description('export the bundled sample service end to end: serve, export, verify, list')
    .option('-o, --out <file.zip>', 'where to write the demo archive', 'rabbit-demo.zip')
    .option('-f, --force', 'replace the archive at --out')
    .addHelpText('after', '\nExamples:\n  rabbit-export demo --out demo.zip\n  rabbit-export demo --force')
    .action((flags: { out: string; force?: boolean }) =>
      runAction(io, false, async () => {
        const { formatListTable, formatVerifyReport, terminalColumns } = await import('../format-archive.js');
        const { startFakeService } = await import('../../fake-service/index.js');
        const { exportAccount } = await import('../../export/export-account.js');
        const { verifyArchive } = await import('../../verify/verify-archive.js');
        const { listArchive } = await import('../../verify/list-archive.js');
        const { createProgress, lineInterval, progressMode } = await import('../progress.js');
        const { checkOutputFile } = await import('../output-path.js');
        const service = await startFakeService({ seed: 1 });
        try {
          // A second demo replaces the archive of the first; anything else at --out needs --force.
          const replacing = !(flags.force ?? false) && (await isDemoArchive(flags.out, service.store));
          const force = (flags.force ?? false) || replacing;
          await checkOutputFile(flags.out, { flag: '--out', force });
          const progress = await createProgress(progressMode(io.stderr, false), io.stderr, lineInterval(io.stderr));
          const started = Date.now();
          try {
            io.stdout.write(`sample service on ${service.baseUrl}\n`);
            if (replacing) io.stdout.write(`replacing ${printable(flags.out)}, the archive of an earlier demo\n`);
            const result = await withInterrupts(io, (signal) =>
              exportAccount({
                out: flags.out,
                baseUrl: service.baseUrl,
                keys: [service.keys.readOnly],
                force,
                signal,
                onEvent: progress.onEvent,
              }),
            );
            progress.stop();
            const report = await verifyArchive(result.out);
            io.stdout.write(`${formatListTable(await listArchive(result.out), terminalColumns(io.stdout, io.env))}\n`);
            io.stdout.write(`${formatVerifyReport(report)}\n`);
            // Three counts describe one run; say how they relate rather than leave four numbers unexplained.
            io.stdout.write(
              `exported ${plural(result.prototypes.total, 'prototype')} in ${seconds(Date.now() - started)}: ` +
                `${plural(result.stats.requests, 'request')} to the service gave ${plural(result.stats.files, 'file')} ` +
                `(${mib(result.archiveBytes)}); with manifest.json the zip holds ${plural(report.checked, 'entry', 'entries')}\n` +
                `archive: ${printable(result.out)}\n`,
            );
            if (!report.ok) return EXIT.failed;
            return result.complete ? EXIT.ok : EXIT.incomplete;
          } finally {
            progress.stop();
          }
        } finally {
          await service.close();
        }
      }),
    );
}

/**
 * An archive an earlier demo wrote: exported from a service on loopback, holding the sample's
 * prototypes under the sample's names and nothing else. Loopback alone is not enough: an account
 * reached through `ssh -L` or a local proxy is exported from 127.0.0.1 too, and is someone's data.
 */
async function isDemoArchive(path: string, sample: FakeStore): Promise<boolean> {
  const [{ readArchiveManifest }, { isLoopbackHost }, { listArchive }] = await Promise.all([
    import('../../archive/open-archive.js'),
    import('../../client/base-url.js'),
    import('../../verify/list-archive.js'),
  ]);
  try {
    const { source } = await readArchiveManifest(path);
    if (!isLoopbackHost(new URL(source.baseUrl).hostname)) return false;
    const rows = await listArchive(path);
    const ids = sample.prototypeIds();
    return rows.length === ids.length && rows.every((row) => sample.head(row.id)?.name === row.name);
  } catch {
    return false;
  }
}
