import { Option, type Command } from 'commander';
import type { ConvertEvent, ConvertStep } from '../../convert/convert-archive.js';
import type { StepWords } from '../work-line.js';
import { FORMATS, formatNames } from '../../convert/formats/registry.js';
import { EXIT } from '../exit-codes.js';
import { runAction, withInterrupts, type CliIO } from '../run.js';

interface ConvertFlags {
  to: string;
  out: string;
  prototype?: string[];
  rendering: boolean;
  json?: boolean;
  quiet?: boolean;
  force?: boolean;
  serialize?: string;
  check?: boolean;
}

export function registerConvert(program: Command, io: CliIO): void {
  program
    .command('convert')
    .description(
      `turn every prototype of an archive into documents that open without rabbit-export: ${formatNames().join(', ')}`,
    )
    .argument('<file.zip>', 'an archive written by rabbit-export (never changed)')
    .addOption(
      new Option('--to <format>', FORMATS.map((format) => `${format.name} (${format.help})`).join(', '))
        .choices(formatNames())
        .makeOptionMandatory(),
    )
    .requiredOption(
      '-o, --out <dir>',
      'folder for the documents and convert-report.json (created if missing; its parent must exist)',
    )
    .option('-f, --force', 'write into an --out folder that is not empty, replacing documents of the same name')
    .option('--prototype <id>', 'convert only this prototype (repeatable)', (id: string, all: string[] = []) => [
      ...all,
      id,
    ])
    .option('--no-rendering', 'leave out the locked layer holding each page as the service rendered it')
    .option('--serialize <zip|tar>', 'bagit: write the bag as one zip or tar file instead of a folder')
    .option('--check', 'wacz, bagit: read the package back once written and check every digest it records')
    .option('--json', 'print the report as one JSON summary record instead of the totals (docs/json.md)')
    .option('-q, --quiet', 'no progress on stderr (the report is printed all the same)')
    .addHelpText(
      'after',
      [
        '\nExamples:',
        ...FORMATS.map((format) => `  rabbit-export convert team.zip --to ${format.name} --out ${format.exampleOut}`),
        `  rabbit-export convert team.zip --to ${formatNames()[0] ?? ''} --out one --prototype 3 \\\n    --no-rendering`,
        '  rabbit-export convert team.zip --to bagit --out team-bag --serialize zip \\\n    --check',
        '\nExit codes: 0 all converted, 1 failed, 2 usage, 3 some prototype not fully\nconverted.',
      ].join('\n'),
    )
    .action((file: string, flags: ConvertFlags) =>
      runAction(io, flags.json ? 'convert' : false, async () => {
        const { formatConvertTotals, formatPrototypeConverted } = await import('../format-convert.js');
        const { convertArchive } = await import('../../convert/convert-archive.js');
        const { outputFolder } = await import('../output-path.js');
        const { recordLine } = await import('../json-records.js');
        const { workProgress } = await import('../work-progress.js');
        // At the command, so every format convert writes follows the one output rule.
        const folder = await outputFolder(flags.out, { flag: '--out', force: flags.force ?? false });
        const onEvent = (event: ConvertEvent): void => {
          if (!flags.json) io.stdout.write(`${formatPrototypeConverted(event.report)}\n`);
        };
        const progress = await workProgress(io, flags, CONVERT_WORDS);
        const report = await withInterrupts(io, (signal) =>
          convertArchive({
            archive: file,
            out: flags.out,
            to: flags.to,
            rendering: flags.rendering,
            ...(flags.serialize !== undefined ? { serialize: flags.serialize } : {}),
            ...(flags.check ? { check: true } : {}),
            ...(flags.prototype ? { prototypes: flags.prototype } : {}),
            onEvent,
            onProgress: (step) => progress.set(step),
            signal,
          }),
        )
          .finally(() => progress.stop())
          .catch(async (error: unknown) => {
            await folder.undo();
            throw error;
          });
        const code = report.complete ? EXIT.ok : EXIT.incomplete;
        io.stdout.write(
          flags.json
            ? recordLine('convert', 'summary', { ok: code === EXIT.ok, exitCode: code, ...report })
            : `${formatConvertTotals(report, flags.out)}\n`,
        );
        return code;
      }),
    );
}

/** What convert's progress calls its steps (convert-archive.ts: ConvertStep). */
const CONVERT_WORDS: Readonly<Record<ConvertStep, StepWords>> = {
  manifest: { verb: 'read', unit: 'manifest entries' },
  // The archive's entries of the prototypes converted: a prototype weighs what it holds.
  documents: { verb: 'converted', unit: 'archive entries' },
  bodies: { verb: 'packaged', unit: 'archive entries' },
  pages: { verb: 'listed the pages of', unit: 'prototypes' },
  finish: { verb: 'writing the package', unit: null },
  serialize: { verb: 'serialized', unit: 'files' },
  check: { verb: 'checked', unit: 'entries of the package' },
};
