// node bench/zip-writer.js [entries...]: cost per entry of the zip writer alone (after `npm run build`).
// Each case runs in a process of its own so that its peak RSS is its own. Entries are ~1 KiB JSON
// bodies, appended one at a time and awaited, as the export does; stored and deflated.
// With `--archiver` or `--yazl` (and that package installed) the same cases run through it for comparison.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const [, , ...args] = process.argv;

function body(i) {
  return Buffer.from(
    JSON.stringify({
      id: `element${i}`,
      type: 'button',
      x: (i * 37) % 1280,
      y: (i * 91) % 800,
      text: `Label ${i} `.repeat(40),
      layer: `layer${i % 17}`,
    }),
  );
}

async function child(writer, mode, count, dest) {
  const store = mode === 'stored';
  const name = (i) => `prototypes/4711/r17/elements/element${i}.json`;
  const started = process.cpuUsage();
  const t0 = performance.now();
  if (writer === 'zipwriter') {
    const { ZipWriter } = await import('../dist/zip/zip-writer.js');
    const zip = await ZipWriter.create(dest);
    for (let i = 0; i < count; i += 1) await zip.addBuffer({ name: name(i), store }, body(i));
    await zip.finish();
  } else if (writer === 'yazl') {
    const { default: yazl } = await import('yazl');
    const { createWriteStream } = await import('node:fs');
    const zip = new yazl.ZipFile();
    const out = createWriteStream(dest);
    const closed = new Promise((resolve) => out.on('close', resolve));
    zip.outputStream.pipe(out);
    // yazl says nothing per entry: a thousand at a time, each thousand written out before the
    // next, so that bodies waiting for the output do not count against it.
    for (let i = 0; i < count; i += 1) {
      zip.addBuffer(body(i), name(i), { compress: !store, mtime: new Date(0) });
      if (i % 1000 === 999) while (zip.entries[i].state < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    zip.end();
    await closed;
  } else {
    const { ZipArchive } = await import('archiver');
    const { createWriteStream } = await import('node:fs');
    const { pipeline } = await import('node:stream/promises');
    const archive = new ZipArchive({ zlib: { level: 6 } });
    const written = pipeline(archive, createWriteStream(dest));
    for (let i = 0; i < count; i += 1) {
      await new Promise((resolve) => {
        archive.once('entry', resolve);
        archive.append(body(i), { name: name(i), store });
      });
    }
    await archive.finalize();
    await written;
  }
  const cpu = process.cpuUsage(started);
  const result = {
    writer,
    mode,
    count,
    usPerEntry: (cpu.user + cpu.system) / count,
    wallS: (performance.now() - t0) / 1000,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    heapMiB: process.memoryUsage().heapUsed / 1024 / 1024,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function main() {
  if (args[0] === '--child') return child(args[1], args[2], Number(args[3]), args[4]);
  const writers = ['zipwriter', ...['archiver', 'yazl'].filter((other) => args.includes(`--${other}`))];
  const counts = args.filter((a) => /^\d+$/.test(a)).map(Number);
  const dir = await mkdtemp(join(tmpdir(), 'zip-bench-'));
  console.log('writer     mode      entries  CPU us/entry  wall s  peak RSS MiB  zip MiB');
  try {
    for (const count of counts.length > 0 ? counts : [50_000, 200_000]) {
      for (const mode of ['stored', 'deflated']) {
        for (const writer of writers) {
          const dest = join(dir, `${writer}-${mode}-${count}.zip`);
          const proc = spawn(
            process.execPath,
            [fileURLToPath(import.meta.url), '--child', writer, mode, String(count), dest],
            { stdio: ['ignore', 'pipe', 'inherit'] },
          );
          let out = '';
          proc.stdout.on('data', (d) => (out += d));
          await new Promise((resolve) => proc.on('close', resolve));
          const r = JSON.parse(out);
          const size = (await stat(dest)).size / 1024 / 1024;
          console.log(
            `${r.writer.padEnd(10)} ${r.mode.padEnd(9)} ${String(r.count).padStart(7)}  ${r.usPerEntry.toFixed(1).padStart(12)}  ${r.wallS.toFixed(1).padStart(6)}  ${r.peakRssMiB.toFixed(0).padStart(12)}  ${size.toFixed(1).padStart(7)}`,
          );
          await rm(dest, { force: true });
        }
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
