import type { Command } from 'commander';
import type { CompressionOptions, DatasetOptions, FakeService, FaultOptions } from '../../fake-service/index.js';
import type * as FakeServiceModule from '../../fake-service/index.js';
import type * as JsonRecordsModule from '../json-records.js';
import { RabbitError } from '../../core/errors.js';
import { intOption } from '../options.js';
import { runAction, type CliIO } from '../run.js';

interface ServeFlags {
  port: number;
  seed: number;
  latency: number;
  prototypes?: number;
  pages?: number;
  elements?: number;
  pngBytes?: number;
  resources?: number;
  bigIds?: boolean;
  faults?: string;
  outageAt?: number;
  outageFor?: number;
  outageKind?: string;
  revokeKeyAfter?: number;
  compress?: string;
  json?: boolean;
}

export function registerServe(program: Command, io: CliIO): void {
  defineServe(program).action((flags: ServeFlags) =>
    runAction(io, flags.json ? 'serve' : false, () => serve(io, flags)),
  );
}

/** The command, its flags and its help. */
function defineServe(program: Command): Command {
  return program
    .command('serve')
    .description('run the bundled fake service on loopback (for trying the tool and for tests)')
    .option('-p, --port <port>', 'port to listen on (0: any free port)', intOption('--port', 0, 65535), 0)
    .option('--seed <n>', 'seed of the sample data', intOption('--seed', 0, 2 ** 31), 1)
    .option('--latency <ms>', 'delay before every response', intOption('--latency', 0, 60_000), 0)
    .option(
      '--prototypes <n>',
      'ordinary prototypes beside the awkward sample ones',
      intOption('--prototypes', 0, 100_000),
    )
    .option('--pages <n>', 'pages per ordinary prototype', intOption('--pages', 0, 10_000))
    .option('--elements <n>', 'elements per page', intOption('--elements', 0, 10_000))
    .option(
      '--resources <n>',
      'an account of this many resources, within a tenth (requests of a full export; 105 at least), in prototypes of 70 to 150 pages (fewer for a small N); with --prototypes, in that many prototypes of as many pages as it takes',
      intOption('--resources', 1, 100_000_000),
    )
    .option('--big-ids', 'add a prototype whose id and discussion ids lie past 2^53 (9007199254740993 ...)')
    .option('--png-bytes <n>', 'extra incompressible bytes in every page PNG', intOption('--png-bytes', 0, 2 ** 30))
    .option('--faults <spec>', 'inject faults, e.g. "rate=0.15,seed=7,kinds=429+503+reset"')
    .option(
      '--outage-at <n>',
      'the whole service goes away at the n-th request (see --outage-for)',
      intOption('--outage-at', 1, 2 ** 31),
    )
    .option(
      '--outage-for <seconds>',
      'how long the outage of --outage-at lasts',
      intOption('--outage-for', 1, 86_400),
      20,
    )
    .option(
      '--outage-kind <kind>',
      'down: stop listening and drop connections, then listen again on the same port; 503: answer 503 with Retry-After seconds; 429: answer 429 with Retry-After as an HTTP date',
      'down',
    )
    .option(
      '--revoke-key-after <n>',
      'the read-only key is refused (401) from its (n+1)-th request on, as a key revoked in the middle of an export',
      intOption('--revoke-key-after', 0, 2 ** 31),
    )
    .option(
      '--compress <when[:codings]>',
      'compress answers: "asked" (as Accept-Encoding allows) or "always" (asked or not), optionally in codings applied in order, e.g. always:gzip,br (gzip x-gzip deflate deflate-raw br identity)',
    )
    .option(
      '--json',
      'print the base URL and keys as one JSON record, and the counts as another when stopped (docs/json.md)',
    )
    .addHelpText(
      'after',
      `
Examples:
  rabbit-export serve --port 8080 --latency 20
  rabbit-export serve --faults "rate=0.1,seed=3"
  rabbit-export serve --faults \\
    "path=/rabbit/api/prototypes/3/pages/page0001.png:trickle,trickle-ms=2000"
  # a restart in the middle of an export:
  rabbit-export serve --outage-at 200 --outage-for 20
  # gzip, deflate or br, as the client prefers:
  rabbit-export serve --compress asked
  # gzip then br, whatever the client asked for:
  rabbit-export serve --compress always:gzip,br
  rabbit-export serve --resources 1000000 --json   # for benchmarks
  rabbit-export serve --resources 250000 --prototypes 1   # one giant prototype`,
    );
}

/** Runs the fake service until SIGINT or SIGTERM. */
async function serve(io: CliIO, flags: ServeFlags): Promise<number> {
  const fake = await import('../../fake-service/index.js');
  const { faults, compression } = specsOf(flags, fake);
  const { listenOn } = await import('../listen-port.js');
  const json = flags.json ? await import('../json-records.js') : undefined;
  const service = await listenOn(flags.port, () =>
    fake.startFakeService({
      port: flags.port,
      seed: flags.seed,
      latencyMs: flags.latency,
      dataset: datasetOf(flags, fake),
      countPaths: false,
      ...(faults ? { faults } : {}),
      ...(flags.outageAt !== undefined
        ? {
            outage: {
              atRequest: flags.outageAt,
              forMs: (flags.outageFor ?? 20) * 1000,
              kind: fake.outageKind(flags.outageKind ?? 'down'),
            },
          }
        : {}),
      ...(compression ? { compression } : {}),
    }),
  );
  // Set once the keys exist: they derive from the seed.
  if (flags.revokeKeyAfter !== undefined)
    service.setRevocation({ key: service.keys.readOnly, afterRequests: flags.revokeKeyAfter });
  // Listen for the stop signal before saying where the service is: a script that reads the
  // first line and stops the service at once must not hit the default action of SIGTERM.
  const stopped = stopSignal(io, service, json);
  printService(io, service, json, fake);
  await stopped;
  return 0;
}

/** --faults and --compress, parsed; a bad one is a usage error. */
function specsOf(
  flags: ServeFlags,
  fake: FakeModule,
): { faults: FaultOptions | undefined; compression: CompressionOptions | undefined } {
  let faults;
  try {
    faults = flags.faults ? fake.parseFaultSpec(flags.faults) : undefined;
  } catch (error) {
    throw new RabbitError('USAGE', `--faults: ${(error as Error).message}`);
  }
  let compression;
  try {
    compression = flags.compress ? fake.parseCompressSpec(flags.compress) : undefined;
  } catch (error) {
    throw new RabbitError('USAGE', `--compress: ${(error as Error).message}`);
  }
  return { faults, compression };
}

/** Settles once SIGINT or SIGTERM has closed the service; with --json, its counts are printed first. */
function stopSignal(io: CliIO, service: FakeService, json: JsonRecords | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      // With --json the service's own counts close the output, for benchmarks and scripts.
      if (json) {
        const { requests, peakInFlight, busyMs, inFlightMs, faultsInjected } = service.stats;
        const peakRssBytes = process.resourceUsage().maxRSS * 1024;
        const meanInFlight = busyMs > 0 ? inFlightMs / busyMs : 0;
        io.stdout.write(
          json.recordLine('serve', 'summary', {
            ok: true,
            exitCode: 0,
            stats: { requests, peakInFlight, meanInFlight, busyMs, faultsInjected, peakRssBytes },
          }),
        );
      }
      void service.close().then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** The fake service's module, loaded when `serve` runs rather than by every command. */
type FakeModule = typeof FakeServiceModule;
/** The records module, loaded with --json only. */
type JsonRecords = typeof JsonRecordsModule;

function datasetOf(flags: ServeFlags, fake: FakeModule): Partial<DatasetOptions> {
  if (flags.resources !== undefined && flags.prototypes !== undefined && flags.pages !== undefined) {
    throw new RabbitError('USAGE', '--resources with --prototypes chooses the number of pages: leave out --pages');
  }
  const shape: Partial<DatasetOptions> = {
    ...(flags.prototypes !== undefined ? { prototypes: flags.prototypes } : {}),
    ...(flags.pages !== undefined ? { pagesPerPrototype: flags.pages } : {}),
    ...(flags.elements !== undefined ? { elementsPerPage: flags.elements } : {}),
    ...(flags.pngBytes !== undefined ? { pngPaddingBytes: flags.pngBytes } : {}),
    ...(flags.bigIds ? { bigIds: true } : {}),
  };
  return flags.resources === undefined ? shape : fake.datasetForResources(flags.resources, shape);
}

function printService(io: CliIO, service: FakeService, json: JsonRecords | undefined, fake: FakeModule): void {
  // Counted by walking the account as an export does: benchmarks compare it with the requests made.
  const resources = fake.countExportRequests(service.store);
  if (json) {
    io.stdout.write(
      json.recordLine('serve', 'ready', {
        baseUrl: service.baseUrl,
        keys: service.keys,
        resources,
        dataset: service.store.dataset,
        seed: service.store.seed,
      }),
    );
    return;
  }
  io.stdout.write(
    `fake service listening at ${service.baseUrl} with ${resources} resources (requests of a full export)\n` +
      `  read-write key: ${service.keys.readWrite}\n` +
      `  read-only key:  ${service.keys.readOnly}\n` +
      // Named by the port: the try of an earlier serve left its sample.zip, which this one must not meet.
      `try: RABBIT_API_KEY=${service.keys.readOnly} rabbit-export export --base-url ${service.baseUrl} --out sample-${new URL(service.baseUrl).port}.zip\n` +
      `stop with Ctrl-C\n`,
  );
}
