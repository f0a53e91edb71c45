// Convert (issue 36): peak RSS of `convert --to F` for every format in the registry, on the
// prototypes that once took a PDF past 256 MiB. Each archive is exported once from the fake
// service; each conversion runs in its own measured process (usage-probe.js).
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MiB, measured, run, serve } from './lib.js';

/** Every format `convert --to` takes, read from the built registry so that a new one is measured too. */
async function formatNames() {
  const { formatNames: names } = await import('../dist/convert/formats/registry.js');
  return names();
}

export const CONVERT_SHAPES = [
  {
    label: '578-page prototype (--resources 60000 --prototypes 1)',
    args: ['--resources', '60000', '--prototypes', '1'],
  },
  {
    label: '1,000 pages of 200 KB renderings (--prototypes 1 --pages 1000 --png-bytes 200000)',
    args: ['--prototypes', '1', '--pages', '1000', '--png-bytes', '200000'],
  },
];
export const CONVERT_GOAL_MIB = 256;

async function exportArchive(dir, args) {
  const service = await serve(args);
  try {
    const archive = join(dir, 'bench.zip');
    const result = await run(['export', '--out', archive, '--concurrency', '8'], {
      RABBIT_API_KEY: service.keys.readOnly,
      RABBIT_BASE_URL: service.baseUrl,
    }).done;
    if (result.code !== 0) throw new Error(`export exited ${result.code}: ${result.stderr}`);
    return archive;
  } finally {
    await service.stop();
  }
}

async function folderBytes(path) {
  const info = await stat(path);
  if (!info.isDirectory()) return info.size;
  let total = 0;
  for (const name of await readdir(path)) total += await folderBytes(join(path, name));
  return total;
}

/** Rows of { shape, format, peakRss, seconds, bytes }, printed as they come. */
export async function convertBench(shapes = CONVERT_SHAPES) {
  const formats = await formatNames();
  const rows = [];
  for (const shape of shapes) {
    const dir = await mkdtemp(join(tmpdir(), 'rabbit-bench-convert-'));
    try {
      const archive = await exportArchive(dir, shape.args);
      const archiveBytes = (await stat(archive)).size;
      console.log(`\n(convert) ${shape.label}: archive ${(archiveBytes / MiB).toFixed(0)} MiB`);
      for (const format of formats) {
        const out = join(dir, `out-${format}`);
        const result = await measured(['convert', archive, '--to', format, '--out', out, '--json']);
        if (result.code !== 0) throw new Error(`convert --to ${format} exited ${result.code}: ${result.stderr}`);
        const report = JSON.parse(result.stdout.trim());
        let bytes = 0;
        for (const p of report.prototypes) if (p.file !== null) bytes += await folderBytes(join(out, p.file));
        // A package format (wacz, bagit) writes one file or folder for the whole archive.
        if (report.package) bytes += await folderBytes(join(out, report.package.file));
        const row = { shape: shape.label, format, peakRss: result.maxRss / MiB, seconds: result.wallMs / 1000, bytes };
        rows.push(row);
        console.log(
          `  --to ${format.padEnd(10)} peak RSS ${row.peakRss.toFixed(0).padStart(4)} MiB (goal <= ${CONVERT_GOAL_MIB}), ${row.seconds.toFixed(1)} s, ${(bytes / MiB).toFixed(1)} MiB written`,
        );
        await rm(out, { recursive: true, force: true });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return rows;
}

export function convertLine(rows) {
  const worst = (format) => Math.max(...rows.filter((r) => r.format === format).map((r) => r.peakRss));
  const formats = [...new Set(rows.map((r) => r.format))];
  return `  convert: worst peak RSS ${formats.map((f) => `${f} ${worst(f).toFixed(0)} MiB`).join(', ')} (goal <= ${CONVERT_GOAL_MIB} MiB each)`;
}
