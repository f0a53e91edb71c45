import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { datasetForResources, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount, type ExportResult } from '../../src/export/export-account.js';
import type { DeadlineTimer } from '../../src/export/deadline.js';
import type { Manifest } from '../../src/manifest/types.js';
import { useFakeService } from '../helpers/fake-service.js';
import { manifestByPython } from './python-zip.js';

// issue 37, point 4: --max-duration used to spend the whole run on the big prototype while the
// small ones waited behind it, so three prototypes of 19 to 36 requests stayed incomplete for four
// runs. A run that cannot do everything now does the small ones whole and leaves the big one.

let service: FakeService;
let dir: string;

// The fixed prototypes 3, 17 and 42 are small (tens of requests); 1001 is about 900.
useFakeService({ seed: 37, dataset: datasetForResources(900, { prototypes: 1 }) }, (fixture) => {
  ({ service, dir } = fixture);
});

const SMALL = ['3', '17', '42'];
const BIG = '1001';

/**
 * An export whose --max-duration runs out after `budget` responses: the deadline's timer is the
 * test's, expired from the response events, so the budget is a count, not a time.
 */
async function runOnBudget(
  out: string,
  budget: number,
  since?: string,
): Promise<{ result: ExportResult; manifest: Manifest; requests: number }> {
  let expire: (() => void) | undefined;
  const timer: DeadlineTimer = (_ms, fire) => {
    expire = fire;
    return () => undefined;
  };
  let responses = 0;
  const result = await exportAccount({
    out: join(dir, out),
    baseUrl: service.baseUrl,
    keys: [service.keys.readOnly],
    concurrency: 4,
    maxDurationMs: 3_600_000,
    deadlineTimer: timer,
    onEvent: (event) => {
      if (event.type === 'response' && ++responses === budget) expire?.();
    },
    ...(since ? { since: join(dir, since) } : {}),
  });
  return { result, manifest: await manifestByPython(result.out), requests: responses };
}

const completeIds = (manifest: Manifest): string[] =>
  Object.entries(manifest.prototypes)
    .filter(([, record]) => record.complete)
    .map(([id]) => id)
    .sort();

describe('--max-duration does whole prototypes, the smallest first', () => {
  it('a budget far below the big prototype completes every small one in the first run; the big one is what is left', async () => {
    const { result, manifest } = await runOnBudget('first.zip', 200);
    expect(result.deadlineReached).toBe(true);
    expect(completeIds(manifest)).toEqual([...SMALL].sort());
    expect(manifest.prototypes[BIG]?.complete ?? false).toBe(false);
    // Every DEADLINE error is the big prototype's (or a page asset's, which belongs to none).
    for (const error of manifest.errors) expect(error.code, error.source).toBe('DEADLINE');
    const apiSources = manifest.errors
      .map((error) => error.source)
      .filter((source) => source.startsWith('/rabbit/api/'));
    expect(apiSources.length).toBeGreaterThan(0);
    expect(apiSources.filter((source) => !new RegExp(`^/rabbit/api/prototypes/${BIG}[/.]`).test(source))).toEqual([]);
    expect(result.left).toMatchObject({ prototypesListed: 4, prototypesComplete: 3, prototypesLeft: 1 });
    expect(result.left.requestsNotStarted).toBeGreaterThan(0);
  });

  it('each rerun --since the last archive completes more, until the archive is complete', async () => {
    let previous: string | undefined;
    let archived = -1;
    const runs: string[] = [];
    let last: Awaited<ReturnType<typeof runOnBudget>>['result'] | undefined;
    for (let night = 1; night <= 8; night++) {
      const out = `night${night}.zip`;
      const { result, manifest } = await runOnBudget(out, 300, previous);
      runs.push(`${night}: ${completeIds(manifest).join(',')}`);
      // The small prototypes stay complete on every run; the big one grows on each.
      for (const id of SMALL) expect(manifest.prototypes[id]?.complete, `${id} on night ${night}`).toBe(true);
      const big = manifest.prototypes[BIG];
      const files = Object.values(big?.revisions ?? {}).reduce((sum, revision) => sum + revision.files.length, 0);
      expect(files, `night ${night}`).toBeGreaterThan(archived);
      archived = files;
      previous = out;
      // The big prototype is the one left: complete exactly when the archive is.
      expect(big?.complete, `night ${night}`).toBe(result.complete);
      last = result;
      if (result.complete) break;
    }
    expect(last?.complete).toBe(true);
    expect(last?.deadlineReached).toBe(false);
    expect(last?.left).toMatchObject({ prototypesComplete: 4, requestsNotStarted: 0, prototypesLeft: 0 });
    // About 900 requests at 300 a night: done on the fourth night at the latest.
    expect(runs.length, runs.join('; ')).toBeLessThanOrEqual(4);
    expect(runs.length).toBeGreaterThan(1);
  });
});
