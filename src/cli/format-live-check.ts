import type { Difference, LiveCheckReport, LiveVerdict } from '../live-check/live-report.js';
import { formatSampleSize } from '../live-check/sample-plan.js';
import { printable } from './format.js';
import { recordLine } from './json-records.js';

/** `verify --against-live` for a person: the seed, each prototype, each difference, then the verdict. */
export function formatLiveCheck(report: LiveCheckReport, verdict: LiveVerdict): string {
  const lines: string[] = [
    `sample ${formatSampleSize(report.sample)}, seed ${report.seed} (the same sample again: --seed ${report.seed})`,
  ];
  for (const [id, tally] of Object.entries(report.byPrototype)) {
    const archived = tally.archivedRevision === null ? 'not in the archive' : `r${tally.archivedRevision} archived`;
    const revisions = tally.liveRevision === null ? archived : `${archived}, r${tally.liveRevision} live`;
    lines.push(
      `prototype ${id} (${revisions}): ${tally.matched} matched, ${tally.changed} changed, ${tally.new} new, ${tally.gone} gone`,
    );
  }
  const kinds = Object.entries(report.byKind).map(
    ([kind, tally]) => `${kind} ${tally.matched}/${tally.changed}/${tally.new}/${tally.gone}`,
  );
  if (kinds.length > 0) lines.push(`by kind (matched/changed/new/gone): ${kinds.join(', ')}`);
  for (const difference of report.differences) lines.push(differenceLine(difference));
  for (const failure of report.failures)
    lines.push(`not checked  ${printable(failure.source)}: ${printable(failure.message)}`);
  if (report.failureCount > report.failures.length)
    lines.push(`... and ${report.failureCount - report.failures.length} more not checked`);
  lines.push(coverageLine(report));
  if (report.stoppedBy) lines.push(stopLine(report));
  lines.push(verdictLine(report, verdict));
  return lines.join('\n');
}

/** One JSON record per difference, then the summary, each a line with its newline: for logs that keep a line per record. */
export function liveCheckRecords(report: LiveCheckReport, verdict: LiveVerdict, exitCode: number): string[] {
  const { differences, failures, ...rest } = report;
  return [
    ...differences.map((difference) => recordLine('verify', 'difference', { ...difference })),
    recordLine('verify', 'summary', {
      ok: verdict === 'match',
      exitCode,
      verdict,
      ...rest,
      sample: formatSampleSize(report.sample),
      differences: differences.length,
      failures,
    }),
  ];
}

function differenceLine(d: Difference): string {
  const where = d.prototype === undefined || d.kind === 'prototype' ? '' : `prototype ${d.prototype} `;
  const what =
    d.kind === 'rendering'
      ? `rendering of page ${d.id} (${d.format ?? ''})`
      : d.kind === 'list'
        ? `list of ${d.id}s${d.parent ? ` of ${d.parent}` : ''}`
        : `${d.kind} ${d.id}${d.parent ? ` on ${d.parent}` : ''}`;
  const revisions =
    d.status === 'changed' && d.archivedRevision !== undefined && d.liveRevision !== undefined
      ? ` (r${d.archivedRevision} archived, r${d.liveRevision} live)`
      : '';
  return `${d.status.padEnd(8)} ${where}${printable(what)}${revisions}`;
}

function coverageLine(report: LiveCheckReport): string {
  const percent = Math.floor(report.share * 1000) / 10;
  return (
    `checked ${report.sampledChecked} of ${report.sampled} sampled resources (of ${report.population} in the archive) ` +
    `and ${report.lists.checked} of ${report.lists.total} lists and prototypes: ${percent}% of the archive`
  );
}

/**
 * Why the check stopped, and what to run next. Lists come first and in full whatever the seed: a
 * check stopped among them, or with nothing of the sample checked, stops the same way with any
 * other seed, so the next step is a larger budget, not another sample. The budget named is the
 * whole check's, one request a list and a sampled resource.
 */
function stopLine(report: LiveCheckReport): string {
  const { checked, total } = report.lists;
  const starved = checked < total || (report.sampled > 0 && report.sampledChecked === 0);
  const reached =
    `with ${checked} of ${total} lists and prototypes and ${report.sampledChecked} sampled resources checked; ` +
    'the lists come first, whatever the --seed';
  switch (report.stoppedBy) {
    case 'max-requests':
      return starved
        ? `stopped at --max-requests ${reached}: run again with --max-requests ${total + report.sampled} to check them and the whole sample`
        : 'stopped at --max-requests; run again with another --seed to check other resources';
    case 'max-duration':
      return starved
        ? `stopped at --max-duration ${reached}: run again with a longer --max-duration`
        : 'stopped at --max-duration; run again with another --seed to check other resources';
    case 'KEY_REFUSED':
      return `stopped: the service refused API key number ${report.keysRefused.join(', ')} during the check; run again with a working key`;
    default:
      return 'stopped: the service stopped answering for longer than --outage-patience; run again later';
  }
}

function verdictLine(report: LiveCheckReport, verdict: LiveVerdict): string {
  if (verdict === 'drift')
    return `DRIFT: ${report.differences.length} difference${report.differences.length === 1 ? '' : 's'} between the archive and the service`;
  if (verdict === 'unchecked') return 'NOT CHECKED: the service did not let every resource be compared (see above)';
  return report.complete
    ? 'MATCHES: everything checked is as the archive holds it'
    : 'MATCHES so far: everything checked is as the archive holds it';
}
