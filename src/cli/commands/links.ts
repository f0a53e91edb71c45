import { Option, type Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import { runAction, type CliIO } from '../run.js';

interface LinksFlags {
  format: 'csv' | 'json' | 'sed' | 'nginx' | 'apache';
  base?: string;
}

export function registerLinks(program: Command, io: CliIO): void {
  program
    .command('links')
    .description(
      "map every old link into the service (API, renderings, page views, editor links) to the archive's file",
    )
    .argument('<file.zip>', 'an archive written by rabbit-export (never changed)')
    .addOption(
      new Option('--format <format>', 'csv or json (for scripts), sed (a sed -E script), nginx or apache (redirects)')
        .choices(['csv', 'json', 'sed', 'nginx', 'apache'])
        .default('csv'),
    )
    .option('--base <url>', "where the archive's files are served from (default: entry names, relative)")
    .addHelpText(
      'after',
      '\nExamples:\n  rabbit-export links team.zip --format csv > links.csv\n' +
        '  rabbit-export links team.zip --format sed \\\n' +
        '    --base https://intranet.example/archive > links.sed\n' +
        '  sed -E -i -f links.sed wiki/*.md\n' +
        '  rabbit-export links team.zip --format nginx --base /archive \\\n' +
        '    > rabbit-links.conf\n\n' +
        'Exit codes: 0 written, 1 failed, 2 usage.',
    )
    .action((file: string, flags: LinksFlags) =>
      runAction(io, false, async () => {
        const { listLinks } = await import('../../links/links-archive.js');
        await listLinks({
          archive: file,
          format: flags.format,
          ...(flags.base !== undefined ? { base: flags.base } : {}),
          write: (chunk) => {
            if (chunk !== '' && !io.stdout.write(chunk))
              return new Promise<void>((resolve) => io.stdout.once('drain', () => resolve()));
          },
        });
        return EXIT.ok;
      }),
    );
}
