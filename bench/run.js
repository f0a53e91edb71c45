// npm run bench: speed and memory of a real export, measured in separate processes so the fake
// service's own work does not count against the exporter (2 cores here: numbers are noisy).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertBench, convertLine } from './convert.js';
import { MiB, run, serve } from './lib.js';
import { bareClient, GIANT, parseSizes, scaleBench } from './scale.js';
import { printSearchRows, searchRows } from './search.js';
import { FIRST_REQUEST_GOAL_MS, startupBench } from './startup.js';

async function exportOnce(service, concurrency, extra = []) {
  const dir = await mkdtemp(join(tmpdir(), 'rabbit-bench-'));
  try {
    const started = process.hrtime.bigint();
    const result = await run(
      ['export', '--out', join(dir, 'bench.zip'), '--json', '--concurrency', String(concurrency), ...extra],
      { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
    ).done;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (result.code !== 0) throw new Error(`export exited ${result.code}: ${result.stderr}`);
    return { seconds, summary: JSON.parse(result.stdout.trim()) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const LATENCY = 20;
const CONCURRENCY = 16;
const SAMPLE_ACCOUNT = ['--prototypes', '10', '--pages', '20', '--elements', '8'];

async function latencyBench({ faults, label }) {
  const latency = LATENCY;
  const concurrency = CONCURRENCY;
  const service = await serve([
    '--latency',
    String(latency),
    ...SAMPLE_ACCOUNT,
    ...(faults ? ['--faults', faults] : []),
  ]);
  const { seconds, summary } = await exportOnce(service, concurrency, faults ? ['--retries', '8'] : []);
  const stats = await service.stop();
  const ideal = (summary.requests * latency) / concurrency / 1000;
  const inside = summary.durationMs / 1000;
  console.log(`\n(${label}) ${summary.requests} requests, ${latency} ms latency, concurrency ${concurrency}`);
  console.log(
    `  export ${inside.toFixed(2)} s, ideal ${ideal.toFixed(2)} s: ${(inside / ideal).toFixed(2)} x ideal (archive written and renamed into place)`,
  );
  console.log(
    `  whole command ${seconds.toFixed(2)} s: ${(seconds / ideal).toFixed(2)} x ideal (node start-up and module loading included)`,
  );
  console.log(
    `  peak requests in flight at the service: ${stats.peakInFlight}; on average ${stats.meanInFlight.toFixed(2)} while it had any`,
  );
  console.log(`  retries ${summary.retries}, faults injected ${stats.faultsInjected}, complete: ${summary.complete}`);
  console.log(`  peak RSS of the exporter: ${(summary.peakRssBytes / MiB).toFixed(0)} MiB`);
  return { ratio: inside / ideal, wall: seconds / ideal, peak: stats.peakInFlight, mean: stats.meanInFlight };
}

/**
 * The yardstick for (a): a bare undici Pool fetching the same URLs from the same kind of service
 * (bench/bare-client.js), in this run, so the machine's mood of the minute counts for both.
 */
async function bareLatencyBench(label) {
  const service = await serve(['--latency', String(LATENCY), ...SAMPLE_ACCOUNT]);
  const started = process.hrtime.bigint();
  const bare = await bareClient(service, CONCURRENCY);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const stats = await service.stop();
  const ideal = (bare.requests * LATENCY) / CONCURRENCY / 1000;
  console.log(
    `\n(${label}) bare undici client, ${bare.requests} requests: ${(bare.wallMs / 1000 / ideal).toFixed(2)} x ideal fetching, ${(seconds / ideal).toFixed(2)} x as a whole process; ${stats.meanInFlight.toFixed(2)} in flight on average`,
  );
  return { ratio: bare.wallMs / 1000 / ideal, wall: seconds / ideal, mean: stats.meanInFlight };
}

async function pngBench() {
  const service = await serve([
    '--prototypes',
    '2',
    '--pages',
    '50',
    '--elements',
    '2',
    '--png-bytes',
    String(3 * MiB),
  ]);
  const { seconds, summary } = await exportOnce(service, 8);
  await service.stop();
  console.log(
    `\n(b) ${(summary.bytes / MiB).toFixed(0)} MiB archive (${summary.files} files) in ${seconds.toFixed(1)} s: ${(summary.bytes / MiB / seconds).toFixed(0)} MiB/s`,
  );
  console.log(`  peak RSS of the exporter: ${(summary.peakRssBytes / MiB).toFixed(0)} MiB (goal <= 160 MiB)`);
  return { rss: summary.peakRssBytes / MiB, bytes: summary.bytes };
}

/** (d) The same export with and without compression (serve --compress asked): bytes on the wire and stored. */
async function compressionBench() {
  const turns = [];
  for (const compress of [[], ['--compress', 'asked']]) {
    const service = await serve(['--latency', String(LATENCY), ...SAMPLE_ACCOUNT, ...compress]);
    const { seconds, summary } = await exportOnce(service, CONCURRENCY);
    await service.stop();
    turns.push({ seconds, summary });
  }
  const [plain, packed] = turns;
  const line = (label, { seconds, summary }) =>
    `  ${label}: ${(summary.wireBytes / MiB).toFixed(2)} MiB on the wire for ${(summary.storedBytes / MiB).toFixed(2)} MiB stored, ${seconds.toFixed(2)} s`;
  console.log(
    `\n(d) bytes on the wire, ${plain.summary.requests} requests, the same export with and without compression`,
  );
  console.log(line('not compressed', plain));
  console.log(line('compressed (serve --compress asked)', packed));
  return {
    ratio: plain.summary.wireBytes / packed.summary.wireBytes,
    stored: packed.summary.storedBytes / packed.summary.wireBytes,
    time: packed.seconds / plain.seconds,
  };
}

function compressionLine(d) {
  return `  (d) compression: ${d.ratio.toFixed(2)} x fewer bytes on the wire than without (bodies stored ${d.stored.toFixed(2)} x their wire size), ${d.time.toFixed(2)} x the time`;
}

// `npm run bench -- --compression` runs (d) alone.
if (process.argv.includes('--compression')) {
  console.log(`\nsummary:\n${compressionLine(await compressionBench())}`);
  process.exit(0);
}

// `npm run bench -- --convert` runs the convert row alone: peak RSS of every format.
if (process.argv.includes('--convert')) {
  console.log(`\nsummary:\n${convertLine(await convertBench())}`);
  process.exit(0);
}

// `npm run bench -- --search=ARCHIVE` runs the scale table's search rows alone, on an archive already exported.
const searchFlag = process.argv.slice(2).find((arg) => arg.startsWith('--search='));
if (searchFlag !== undefined) {
  const archive = searchFlag.slice('--search='.length);
  const dir = await mkdtemp(join(tmpdir(), 'rabbit-bench-search-'));
  try {
    printSearchRows([{ archive, rows: await searchRows(archive, join(dir, 'no-index.zip')) }]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

// `npm run bench -- --scale[=10k,100k,1m,250k:1]` runs issue 9's scale table (and issue 27's giant
// prototype, 250k:1 or `giant`) instead of (a) to (c).
const scaleFlag = process.argv.slice(2).find((arg) => arg === '--scale' || arg.startsWith('--scale='));
if (scaleFlag !== undefined) {
  await scaleBench(parseSizes(scaleFlag.includes('=') ? scaleFlag.slice('--scale='.length) : `10k,100k,1m,${GIANT}`));
  process.exit(0);
}

// These machines are shared and noisy: (a) runs three times and reports the median.
// The bare client takes turns with the exporter, three runs each.
const runs = [];
const bares = [];
for (let i = 1; i <= 3; i++) {
  runs.push(await latencyBench({ label: `a, run ${i} of 3`, faults: undefined }));
  bares.push(await bareLatencyBench(`a, bare client, run ${i} of 3`));
}
const median = (list, key) => list.map((r) => r[key]).sort((x, y) => x - y)[1];
const a = { ratio: median(runs, 'ratio'), wall: median(runs, 'wall'), mean: median(runs, 'mean') };
const bare = { ratio: median(bares, 'ratio'), wall: median(bares, 'wall'), mean: median(bares, 'mean') };
const spread = `${Math.min(...runs.map((r) => r.ratio)).toFixed(2)}-${Math.max(...runs.map((r) => r.ratio)).toFixed(2)}`;
const b = await pngBench();
const c = await latencyBench({ label: 'c: 10 % transient faults', faults: 'rate=0.1,seed=7' });
const startup = await startupBench();
const d = await compressionBench();
const converted = await convertBench();
console.log('\nsummary:');
console.log(
  `  (a) median ${a.ratio.toFixed(2)} x ideal inside the export (runs ${spread}); the whole command, process start included: ${a.wall.toFixed(2)} x ideal (goal <= 1.15), peak in flight ${runs.map((r) => r.peak).join('/')} (goal 16), ${a.mean.toFixed(2)} on average`,
);
console.log(
  `      a bare undici client on the same URLs, same run: ${bare.ratio.toFixed(2)} x ideal fetching, ${bare.wall.toFixed(2)} x as a whole process, ${bare.mean.toFixed(2)} in flight on average`,
);
console.log(
  `  (b) peak RSS ${b.rss.toFixed(0)} MiB for ${(b.bytes / MiB).toFixed(0)} MiB of archive (goal <= 160 MiB, >= 300 MiB of PNG)`,
);
const [[, nodeMs], [, versionMs], [, helpMs]] = startup.rows;
console.log(
  `  start-up: --version ${(versionMs / nodeMs).toFixed(2)} x, export --help ${(helpMs / nodeMs).toFixed(2)} x node -e 0 (goal <= 1.5); export's first request ${startup.firstRequest.toFixed(0)} ms after spawn (goal <= ${FIRST_REQUEST_GOAL_MS})`,
);
console.log(
  `  (c) ${c.ratio.toFixed(2)} x ideal with 10 % faults (each 429/503 asks for Retry-After: 1 s, and halves the concurrency)`,
);
console.log(compressionLine(d));
console.log(convertLine(converted));
