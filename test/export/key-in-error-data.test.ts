import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { isRabbitError } from '../../src/core/errors.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A failure carries context beside its message (the URL it failed on), and `--json` prints that
 * context in the summary's error. A base URL whose path holds the key (a careless copy of a link)
 * puts the key in that URL: the message was scrubbed of it, the context must be too.
 */
let service: FakeService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

describe('an export that fails on a URL holding the key', () => {
  it('says the URL in its error without the key, in the message and in the context beside it', async () => {
    service = await startFakeService({ seed: 3 });
    const key = service.keys.readOnly;
    const dir = await tempDir();
    const failure = await exportAccount({
      out: join(dir, 'a.zip'),
      baseUrl: `${service.baseUrl}/${key}/`,
      keys: [key],
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isRabbitError(failure)).toBe(true);
    if (!isRabbitError(failure)) return;
    expect(failure.data?.['url']).toEqual(expect.stringContaining('REDACTED'));
    expect(JSON.stringify({ message: failure.message, data: failure.data })).not.toContain(key);
  });
});
