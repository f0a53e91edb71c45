import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
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

  it('is never rewritten on the way to a test run or a package: a stale one stops them with the way to remake it', async () => {
    // `npm test` builds before it runs this file: a build that rewrote the module would heal the
    // working copy first, and a commit of search-box.ts alone would pass with a stale module.
    const { scripts } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const runs = Object.entries(scripts).filter(([, line]) => line.includes('scripts/bundle-browser.mjs'));
    expect(runs.map(([name]) => name).sort()).toEqual(['build', 'bundle']);
    expect(scripts['build']).toContain('node scripts/bundle-browser.mjs --check');
    expect(scripts['bundle']).toBe('node scripts/bundle-browser.mjs');
    const packaging = await readFile(join(ROOT, 'scripts/package.mjs'), 'utf8');
    expect(packaging.match(/bundleBrowser\([^)]*\)/g)).toEqual(['bundleBrowser({ check: true })']);
  });
});
