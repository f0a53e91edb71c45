import type { Command } from 'commander';
import { parseFaultSpec, startFakeService, type FakeService } from '../../fake-service/index.js';
import { RabbitError } from '../../core/errors.js';
import { intOption } from '../options.js';
import { runAction, type CliIO } from '../run.js';

interface ServeFlags {
  port: number;
  seed: number;
  latency: number;
  faults?: string;
  json?: boolean;
}

export function registerServe(program: Command, io: CliIO): void {
  program
    .command('serve')
    .description('run the bundled fake service on loopback (for trying the tool and for tests)')
    .option('-p, --port <port>', 'port to listen on (0: any free port)', intOption('--port', 0, 65535), 0)
    .option('--seed <n>', 'seed of the sample data', intOption('--seed', 0, 2 ** 31), 1)
    .option('--latency <ms>', 'delay before every response', intOption('--latency', 0, 60_000), 0)
    .option('--faults <spec>', 'inject faults, e.g. "rate=0.15,seed=7,kinds=429+503+reset"')
    .option('--json', 'print the base URL and keys as one JSON line')
    .addHelpText('after', '\nExamples:\n  rabbit-export serve --port 8080 --latency 20\n  rabbit-export serve --faults "rate=0.1,seed=3"')
    .action((flags: ServeFlags) =>
      runAction(io, flags.json ?? false, async () => {
        let faults;
        try {
          faults = flags.faults ? parseFaultSpec(flags.faults) : undefined;
        } catch (error) {
          throw new RabbitError('USAGE', `--faults: ${(error as Error).message}`);
        }
        const service = await startFakeService({
          port: flags.port,
          seed: flags.seed,
          latencyMs: flags.latency,
          ...(faults ? { faults } : {}),
        });
        printService(io, service, flags.json ?? false);
        await new Promise<void>((resolve) => {
          const stop = (): void => {
            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
            void service.close().then(resolve);
          };
          process.on('SIGINT', stop);
          process.on('SIGTERM', stop);
        });
        return 0;
      }),
    );
}

function printService(io: CliIO, service: FakeService, json: boolean): void {
  if (json) {
    io.stdout.write(`${JSON.stringify({ baseUrl: service.baseUrl, keys: service.keys })}\n`);
    return;
  }
  io.stdout.write(
    `fake service listening at ${service.baseUrl}\n` +
      `  read-write key: ${service.keys.readWrite}\n` +
      `  read-only key:  ${service.keys.readOnly}\n` +
      `try: RABBIT_API_KEY=${service.keys.readOnly} rabbit-export export --base-url ${service.baseUrl} --out sample.zip\n` +
      `stop with Ctrl-C\n`,
  );
}
