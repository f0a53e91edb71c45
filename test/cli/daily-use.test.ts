import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// issue 45: what a user meets using the tool every day.

describe('two exports of the sample account', () => {
  it('diff finds nothing changed, whatever port each sample service listened on', async () => {
    const dir = await tempDir();
    const archives: string[] = [];
    for (const name of ['monday.zip', 'tuesday.zip']) {
      const service = await startFakeService({ seed: 1 });
      try {
        const out = join(dir, name);
        await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
        archives.push(out);
      } finally {
        await service.close();
      }
    }
    const run = await runCli(['diff', ...archives]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('0 added, 0 removed, 0 changed, 5 unchanged');
  });
});
