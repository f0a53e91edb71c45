// npm run bench -- --scale[=10k,100k,1m]: issue 9's figures. For each size the fake service runs
// in its own process (latency 0); a bare undici client and the exporter fetch the same URLs from
// it in the same run, then verify, ls, diff and export --since read the result.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measured, MiB, runNode, serve } from './lib.js';
import { printSearchRows, searchRows } from './search.js';

const BARE_CLIENT = fileURLToPath(new URL('./bare-client.js', import.meta.url));
const CONCURRENCY = 16;

/** The row of one giant prototype: 250,000 resources in a single prototype (issue 27). */
export const GIANT = '250k:1';

/**
 * "10k,100k,1m,250k:1" -> sizes: a number of resources, in prototypes of 100 pages, or after a
 * colon in that many prototypes of as many pages as it takes ("giant" is 250k:1).
 */
export function parseSizes(text) {
  return text.split(',').map((part) => {
    const spec = part.trim().toLowerCase() === 'giant' ? GIANT : part.trim();
    const match = /^(\d+(?:\.\d+)?)([km]?)(?::(\d+))?$/i.exec(spec);
    if (!match) throw new Error(`--scale: cannot read size "${part}" (use e.g. 10k,100k,1m,250k:1)`);
    const resources = Math.round(Number(match[1]) * { '': 1, k: 1e3, m: 1e6 }[match[2].toLowerCase()]);
    return match[3] === undefined ? { resources } : { resources, prototypes: Number(match[3]) };
  });
}

function unzipTest(file) {
  return new Promise((resolve) => {
    const child = spawn('unzip', ['-tqq', file], { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}

export async function bareClient(service, concurrency = CONCURRENCY) {
  const config = {
    baseUrl: service.baseUrl,
    key: service.keys.readOnly,
    seed: service.seed,
    dataset: service.dataset,
    concurrency,
  };
  const result = await runNode([BARE_CLIENT, JSON.stringify(config)]).done;
  if (result.code !== 0) throw new Error(`bare client exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout.trim());
}

function summaryOf(result) {
  try {
    return JSON.parse(result.stdout.trim().split('\n').at(-1));
  } catch {
    return undefined;
  }
}

/**
 * How many times the bare client and the export take turns at a size. The machines are shared:
 * outside load comes and goes within minutes and moves one process's CPU noticeably, so a
 * single pair can catch the two in different weather. The row shows the pair with the median
 * ratio and the range of all of them. A million-resource export takes two minutes and more, long
 * enough to average the weather itself, so it runs once.
 */
function pairsFor(resources) {
  return resources >= 500_000 ? 1 : 3;
}

async function oneSize({ resources: target, prototypes }) {
  const service = await serve([
    '--resources',
    String(target),
    ...(prototypes === undefined ? [] : ['--prototypes', String(prototypes)]),
  ]);
  const label =
    prototypes === undefined
      ? `${service.resources}`
      : `${service.resources} in ${prototypes} prototype${prototypes === 1 ? '' : 's'}`;
  const dir = await mkdtemp(join(tmpdir(), 'rabbit-scale-'));
  const env = { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl };
  const first = join(dir, 'first.zip');
  const second = join(dir, 'second.zip');
  try {
    const pairs = [];
    let exported;
    const count = pairsFor(service.resources);
    for (let turn = 0; turn < count; turn++) {
      console.log(
        `\n${service.resources} resources${count > 1 ? ` (turn ${turn + 1} of ${count})` : ''}: ${turn % 2 === 0 ? 'bare client, then export' : 'export, then bare client'}...`,
      );
      await rm(first, { force: true });
      const exportOnce = () =>
        measured(['export', '--out', first, '--json', '--concurrency', String(CONCURRENCY)], env);
      let bare;
      if (turn % 2 === 0) {
        bare = await bareClient(service);
        exported = await exportOnce();
      } else {
        exported = await exportOnce();
        bare = await bareClient(service);
      }
      const requests = summaryOf(exported)?.requests ?? NaN;
      const perRequest = exported.cpuMs / requests;
      const pair = {
        bare,
        exported,
        requests,
        cpuRatio: perRequest / (bare.cpuMs / bare.requests),
        wholeRatio: perRequest / (wholeCpuMs(bare) / bare.requests),
      };
      pairs.push(pair);
      if (count > 1)
        console.log(
          `  CPU ratio ${pair.cpuRatio.toFixed(2)} (${perRequest.toFixed(3)} against ${(bare.cpuMs / bare.requests).toFixed(3)} ms a request; ${pair.wholeRatio.toFixed(2)} against the bare client's whole process), export peak RSS ${mib(exported.maxRss)} MiB`,
        );
      if (exported.code !== 0) break;
    }
    const summary = summaryOf(exported);
    if (exported.code !== 0)
      console.log(`  export exited ${exported.code}: ${exported.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    const ok = exported.code === 0;
    const median = [...pairs].sort((a, b) => a.cpuRatio - b.cpuRatio)[Math.floor(pairs.length / 2)];
    const { bare } = median;
    console.log(`  verify, ls, export --since, diff...`);
    const verify = ok ? await measured(['verify', first, '--json']) : undefined;
    const ls = ok ? await measured(['ls', first]) : undefined;
    const search = ok ? await searchRows(first, join(dir, 'no-index.zip')) : undefined;
    const since = ok
      ? await measured(
          ['export', '--out', second, '--json', '--concurrency', String(CONCURRENCY), '--since', first],
          env,
        )
      : undefined;
    const diff = ok && since?.code === 0 ? await measured(['diff', first, second, '--json']) : undefined;
    const unzipOk = ok && (await unzipTest(first)) && (since?.code !== 0 || (await unzipTest(second)));
    const requests = summary?.requests ?? NaN;
    const row = {
      label,
      resources: service.resources,
      requests,
      wall: median.exported.wallMs / 1000,
      rps: median.requests / (median.exported.wallMs / 1000),
      cpuPerRequest: median.exported.cpuMs / median.requests,
      bareCpuPerRequest: bare.cpuMs / bare.requests,
      bareWholeCpuPerRequest: wholeCpuMs(bare) / bare.requests,
      bareWall: bare.wallMs / 1000,
      cpuRatios: pairs.map((pair) => pair.cpuRatio),
      // The highest of the turns: memory is a limit, not an average.
      rss: {
        export: Math.max(...pairs.map((pair) => pair.exported.maxRss)),
        verify: verify?.maxRss,
        ls: ls?.maxRss,
        search: search && Math.max(...search.map((r) => r.rss * MiB)),
        diff: diff?.maxRss,
        since: since?.maxRss,
      },
      search,
      walls: { verify: verify?.wallMs, ls: ls?.wallMs, diff: diff?.wallMs, since: since?.wallMs },
      verified: verify?.code === 0,
      unzipOk,
      exportCode: exported.code,
      bareFailed: Math.max(...pairs.map((pair) => pair.bare.failed)),
    };
    row.cpuRatio = row.cpuPerRequest / row.bareCpuPerRequest;
    row.wholeCpuRatio = row.cpuPerRequest / row.bareWholeCpuPerRequest;
    row.wallRatio = row.wall / row.bareWall;
    return row;
  } finally {
    const stats = await service.stop().catch(() => undefined);
    if (stats?.peakRssBytes) console.log(`  fake service peak RSS ${(stats.peakRssBytes / MiB).toFixed(0)} MiB`);
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The bare client's CPU as a whole process: its fetching and its own start-up (node's, and
 * `import 'undici'`), as the export's CPU figure is its whole process; the URL list that only
 * the bench needs is in neither.
 */
const wholeCpuMs = (bare) => bare.cpuMs + bare.startCpuMs;

const mib = (bytes) => (bytes === undefined || Number.isNaN(bytes) ? '-' : (bytes / MiB).toFixed(0));
const secs = (ms) => (ms === undefined ? '-' : (ms / 1000).toFixed(1));

export async function scaleBench(sizes) {
  const rows = [];
  for (const size of sizes) rows.push(await oneSize(size));
  console.log(
    `\nscale (latency 0, concurrency ${CONCURRENCY}; CPU = user+sys of the export's whole process, against the bare client's fetching alone and, like for like, its whole process (start-up and import of undici included, the bench's URL list not); the bare client and the export take turns, the row is the turn with the median CPU ratio; RSS = peak, MiB, export's the highest of its turns; bounds: RSS <= 200, CPU ratio <= 2)`,
  );
  const header = [
    'resources',
    'requests',
    'wall s',
    'req/s',
    'CPU ms/req',
    'bare CPU ms/req',
    'bare whole process',
    'bare wall s',
    'CPU ratio',
    'ratio, each turn',
    'ratio, like for like',
    'wall ratio',
    'RSS export',
    'RSS verify',
    'RSS ls',
    'RSS search',
    'RSS diff',
    'RSS since',
    'verify',
    'unzip -t',
  ];
  const table = rows.map((r) => [
    r.label,
    r.requests,
    r.wall.toFixed(1),
    r.rps.toFixed(0),
    r.cpuPerRequest.toFixed(3),
    r.bareCpuPerRequest.toFixed(3),
    r.bareWholeCpuPerRequest.toFixed(3),
    r.bareWall.toFixed(1),
    r.cpuRatio.toFixed(2),
    r.cpuRatios.map((ratio) => ratio.toFixed(2)).join(' / '),
    r.wholeCpuRatio.toFixed(2),
    r.wallRatio.toFixed(2),
    mib(r.rss.export),
    mib(r.rss.verify),
    mib(r.rss.ls),
    mib(r.rss.search),
    mib(r.rss.diff),
    mib(r.rss.since),
    r.verified ? 'pass' : 'FAIL',
    r.unzipOk ? 'pass' : 'FAIL',
  ]);
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map(() => '---').join('|')}|`);
  for (const cells of table) console.log(`| ${cells.join(' | ')} |`);
  console.log(
    '\nwall of the readers (s): ' +
      rows
        .map(
          (r) =>
            `${r.label}: verify ${secs(r.walls.verify)}, ls ${secs(r.walls.ls)}, diff ${secs(r.walls.diff)}, since ${secs(r.walls.since)}`,
        )
        .join('; '),
  );
  printSearchRows(rows.filter((r) => r.search).map((r) => ({ archive: r.label, rows: r.search })));
  for (const r of rows) {
    if (r.requests !== r.resources)
      console.log(`note: ${r.resources} resources, but the export made ${r.requests} requests (exit ${r.exportCode})`);
    if (r.bareFailed > 0) console.log(`note: the bare client saw ${r.bareFailed} non-200 answers at ${r.resources}`);
  }
  return rows;
}
