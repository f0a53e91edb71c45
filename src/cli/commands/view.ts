import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import { intOption } from '../options.js';
import { runAction, type CliIO } from '../run.js';
import { printable, terminalJson } from '../terminal-text.js';
import { shellWords } from '../../core/shell-quote.js';

interface ViewFlags {
  port: number;
  open?: boolean;
}

export function registerView(program: Command, io: CliIO): void {
  program
    .command('view')
    .description('browse an archive in your browser: serves it on loopback without extracting it')
    .argument('<file.zip>', 'the archive to browse')
    .option('-p, --port <port>', 'port to listen on (0: any free port)', intOption('--port', 0, 65535), 0)
    .option('--open', 'open the default browser at the address')
    .addHelpText(
      'after',
      '\nExamples:\n  rabbit-export view team.zip\n  rabbit-export view team.zip --port 8080\n  rabbit-export view team.zip --open\n\nAn unzipped archive also opens without this: open its index.html in any browser.',
    )
    .action((file: string, flags: ViewFlags) =>
      runAction(io, false, async () => {
        const { serveArchive } = await import('../../viewer/serve-archive.js');
        const { listenOn } = await import('../listen-port.js');
        const server = await listenOn(flags.port, () =>
          serveArchive(file, {
            port: flags.port,
            onEvent: (event) =>
              io.stderr.write(
                `refused ${terminalJson(event.entry)} (${event.reason}, HTTP ${event.status}): run ${printable(shellWords('rabbit-export', 'verify', file))} to list what is damaged\n`,
              ),
          }),
        );
        io.stdout.write(`serving ${printable(file)} at ${server.url}\nstop with Ctrl-C\n`);
        if (flags.open) {
          const { openInBrowser } = await import('../open-browser.js');
          if (!(await openInBrowser(server.url, { env: io.env })))
            io.stderr.write(`could not start a browser; open ${server.url} in one yourself\n`);
        }
        await new Promise<void>((resolve) => {
          const stop = (): void => {
            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
            void server.close().then(resolve);
          };
          process.on('SIGINT', stop);
          process.on('SIGTERM', stop);
        });
        return EXIT.ok;
      }),
    );
}
