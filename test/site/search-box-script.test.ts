import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe("the search box's script", () => {
  it('is the bundle of its TypeScript as it is now (src/site/search-box.generated.ts is not stale)', async () => {
    const checked = await promisify(execFile)(process.execPath, ['scripts/bundle-browser.mjs', '--check'], {
      cwd: ROOT,
    }).then(
      () => 'fresh',
      (error: { stderr?: string }) => error.stderr ?? String(error),
    );
    expect(checked).toBe('fresh');
  });
});
