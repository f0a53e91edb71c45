import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { tempDir } from '../helpers/temp.js';

let service: FakeService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

describe('bodies too large to hold, arriving in many small decoded pieces', () => {
  it('go to disk without a listener per piece: no MaxListenersExceededWarning', async () => {
    // gzip decoding hands over 16 KiB at a time: a 400 KB PNG is two dozen pieces, all held
    // until the body is known to be large, then written to its file at once.
    service = await startFakeService({ compression: { when: 'always' }, dataset: { pngPaddingBytes: 400_000 } });
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning);
    };
    process.on('warning', onWarning);
    try {
      const result = await exportAccount({
        out: join(await tempDir(), 'big.zip'),
        baseUrl: service.baseUrl,
        keys: [service.keys.readOnly],
        prototypes: new Set(['3']),
      });
      expect(result.complete).toBe(true);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');
  });
});
