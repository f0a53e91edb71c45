import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function testFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? Promise.resolve([]) : testFiles(path);
      return Promise.resolve(entry.name.endsWith('.test.ts') ? [path] : []);
    }),
  );
  return nested.flat();
}

describe('test isolation', () => {
  // Most files share one module graph per worker (vitest.config.ts): a module replaced with
  // vi.mock there would leak into the files after it, or come too late to take effect.
  it('runs every file that replaces a module in the isolated project', async () => {
    const config = await readFile(join(ROOT, 'vitest.config.ts'), 'utf8');
    const listed = /const ISOLATED = \[([^\]]*)\]/.exec(config)?.[1] ?? '';
    const isolated = [...listed.matchAll(/'([^']+)'/g)].map((match) => match[1]);
    expect(isolated.length).toBeGreaterThan(0);
    const mocking: string[] = [];
    for (const file of await testFiles(join(ROOT, 'test'))) {
      if (/\bvi\.(?:mock|doMock|hoisted)\(/.test(await readFile(file, 'utf8'))) mocking.push(relative(ROOT, file));
    }
    expect(mocking.filter((file) => file !== 'test/helpers/isolation.test.ts').sort()).toEqual([...isolated].sort());
  });
});
