import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/helpers/no-network.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores on every machine here: more workers only add contention.
    maxWorkers: 2,
  },
});
