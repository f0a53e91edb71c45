// Search at scale (issue 36): `rabbit-export search` on an exported archive with its index, and on
// a copy without it (what an archive from before the index gets). Time to the first hit and to the
// whole answer are from spawn, process start included; RSS is the command's peak.
// `npm run bench -- --search=ARCHIVE` runs these rows alone on an archive already made.
import { spawn } from 'node:child_process';
import { copyFile, rm } from 'node:fs/promises';
import { measured, MiB } from './lib.js';

/** A word of the fake service's element texts: hits in every prototype, the first at once. */
export const SEARCH_QUERY = 'login';
/** Bounds from issue 36: first hit, whole answer, peak RSS. */
export const SEARCH_BOUNDS = { firstMs: 1000, totalMs: 10_000, rssMiB: 256 };

/** `zip -d`: a copy of the archive without its search index, as an archive from before it. */
async function withoutIndex(archive, copy) {
  await copyFile(archive, copy);
  const code = await new Promise((resolve) => {
    const child = spawn('zip', ['-q', '-d', copy, 'search/*'], { stdio: 'ignore' });
    child.on('error', () => resolve(-1));
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`zip -d exited ${code}`);
}

function searchRow(label, result) {
  const hits = result.stdout.split('\n').filter((line) => line.startsWith('{"type":"hit",')).length;
  return {
    label,
    first: result.firstOutputMs,
    total: result.wallMs,
    rss: result.maxRss / MiB,
    hits,
    code: result.code,
  };
}

export async function searchRows(archive, workCopy) {
  console.log(`  search "${SEARCH_QUERY}", with the index, then without it...`);
  const indexed = searchRow('with the index', await measured(['search', archive, SEARCH_QUERY, '--json']));
  let scanned;
  try {
    await withoutIndex(archive, workCopy);
    scanned = searchRow('without an index', await measured(['search', workCopy, SEARCH_QUERY, '--json']));
  } finally {
    await rm(workCopy, { force: true });
  }
  return [indexed, scanned];
}

const secs = (ms) => (ms === undefined || Number.isNaN(ms) ? '-' : (ms / 1000).toFixed(2));

export function printSearchRows(rows) {
  const { firstMs, totalMs, rssMiB } = SEARCH_BOUNDS;
  console.log(
    `\nsearch "${SEARCH_QUERY}" --json (from spawn; bounds: first hit <= ${firstMs / 1000} s, all <= ${totalMs / 1000} s, RSS <= ${rssMiB} MiB)`,
  );
  console.log('| archive | search | first hit s | all s | hits | RSS MiB | exit |');
  console.log('|---|---|---|---|---|---|---|');
  for (const { archive, rows: pair } of rows)
    for (const row of pair)
      console.log(
        `| ${archive} | ${row.label} | ${secs(row.first)} | ${secs(row.total)} | ${row.hits} | ${row.rss.toFixed(0)} | ${row.code} |`,
      );
}
