import { InvalidArgumentError, Option, type Command } from 'commander';
import { SEARCH_KINDS, type SearchKind } from '../../search/search-record.js';
import type { SearchStep } from '../../search/search-archive.js';
import type { StepWords } from '../work-line.js';
import { EXIT } from '../exit-codes.js';
import { runAction, type CliIO } from '../run.js';

interface SearchFlags {
  kind?: string[];
  prototype?: string[];
  json?: boolean;
  quiet?: boolean;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerSearch(program: Command, io: CliIO): void {
  program
    .command('search')
    .description('find names, element texts, discussions and milestones in an archive')
    .argument('<file.zip>', 'an archive written by rabbit-export')
    .argument('<query>', 'text to find; case, accents and width are ignored')
    .addOption(
      new Option('--kind <kind>', 'only this kind of text (repeatable)')
        .choices(SEARCH_KINDS)
        .argParser((value, previous: string[] | undefined) => {
          if (!(SEARCH_KINDS as readonly string[]).includes(value))
            throw new InvalidArgumentError(`--kind must be one of ${SEARCH_KINDS.join(', ')}`);
          return collect(value, previous);
        }),
    )
    .option('--prototype <id>', 'only this prototype (repeatable)', collect)
    .option('--json', 'one JSON record per hit, then a summary record (docs/json.md)')
    .option('-q, --quiet', 'no progress on stderr (the hits are printed all the same)')
    .addHelpText(
      'after',
      '\nExamples:\n  rabbit-export search team.zip "coupon"\n' +
        '  rabbit-export search team.zip menu --kind discussion\n' +
        '  rabbit-export search team.zip 日本 --prototype 3 --json | jq .\n\n' +
        'Exit codes: 0 searched (with or without hits), 1 failed, 2 usage.',
    )
    .action((file: string, query: string, flags: SearchFlags) =>
      runAction(io, flags.json ? 'search' : false, async () => {
        const { searchArchive } = await import('../../search/search-archive.js');
        const { placesOf } = await import('../../site/search-places.js');
        const { formatHit, formatSummary, jsonHit, jsonSummary } = await import('../format-search.js');
        const { workProgress } = await import('../work-progress.js');
        const color = io.stdout.isTTY === true && io.env['NO_COLOR'] === undefined;
        const write = (text: string) =>
          io.stdout.write(text) ? undefined : new Promise<void>((resolve) => io.stdout.once('drain', resolve));
        const progress = await workProgress(io, flags, SEARCH_WORDS);
        try {
          for await (const event of searchArchive({
            archive: file,
            query,
            kinds: (flags.kind ?? []) as SearchKind[],
            prototypes: flags.prototype ?? [],
            places: placesOf,
            onProgress: (step) => progress.set(step),
          })) {
            if (event.type === 'hit') await write(flags.json ? jsonHit(event.hit) : formatHit(event.hit, color));
            else {
              // The bar goes before the summary: what stays on the terminal is the hits and their count.
              progress.stop();
              await write(flags.json ? jsonSummary(event.summary) : formatSummary(event.summary));
            }
          }
        } finally {
          progress.stop();
        }
        return EXIT.ok;
      }),
    );
}

/** What search's progress calls its steps (search-archive.ts: SearchStep). */
const SEARCH_WORDS: Readonly<Record<SearchStep, StepWords>> = {
  manifest: { verb: 'read', unit: 'manifest entries' },
  prototypes: { verb: 'searched', unit: 'prototypes' },
};
