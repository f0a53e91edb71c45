import { describe, expect, it } from 'vitest';

describe('the test run', () => {
  it('refuses connections beyond loopback before they are made', async () => {
    const error = await fetch('http://example.com/').then(
      () => undefined,
      (e: unknown) => e as Error & { cause?: Error },
    );
    // nock's refusal, not a DNS failure of a machine that happens to be offline.
    expect(String(error?.cause?.message ?? error?.message)).toMatch(/Disallowed net connect/);
  });
});
