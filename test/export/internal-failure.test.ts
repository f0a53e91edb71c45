import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportAccount } from '../../src/export/export-account.js';
import { registerExport } from '../../src/cli/commands/export.js';
import { isRabbitError } from '../../src/core/errors.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { tempDir } from '../helpers/temp.js';

let service: FakeService;
useFakeService({ seed: 1 }, (fixture) => (service = fixture.service));

describe('a failure nobody asked for', () => {
  it('is told as what it was, never as an interruption, and leaves nothing at --out', async () => {
    const out = join(await tempDir(), 'team.zip');
    const error: unknown = await exportAccount({
      out,
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      onEvent: (event) => {
        // An error of the tool's own, once the crawl has drained.
        if (event.type === 'phase' && event.phase === 'requisites') throw new Error('internal: something broke');
      },
    }).catch((e: unknown) => e);
    expect(isRabbitError(error, 'INTERRUPTED')).toBe(false);
    expect((error as Error).message).toBe('internal: something broke');
    expect(existsSync(out)).toBe(false);
  });

  it('--max-size json or html past what can be read as text is a usage error, before any request', async () => {
    for (const caps of ['json=300', 'html=1024']) {
      const run = await runCli(['export', '--out', join(await tempDir(), 'a.zip'), '--max-size', caps], {
        register: registerExport,
        env: { RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl },
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('can be at most 256 (MiB): it is read whole as text');
    }
    expect(service.stats.requests).toBe(0);
  });
});
