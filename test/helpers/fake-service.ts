import { beforeEach, afterEach } from 'vitest';
import { startFakeService, type FakeService, type FakeServiceOptions } from '../../src/fake-service/index.js';
import { tempDir } from './temp.js';

export interface FakeServiceFixture {
  service: FakeService;
  /** A fresh temp folder, removed after the test (see temp.ts). */
  dir: string;
}

/**
 * The one way a test file gets a fake service of its own for each test: started before, closed
 * after, with a temp folder beside it. `use` hands both over; the file keeps them in its own
 * variables, so tests read `service` and `dir` as before.
 */
export function useFakeService(options: FakeServiceOptions, use: (fixture: FakeServiceFixture) => void): void {
  let running: FakeService | undefined;
  beforeEach(async () => {
    running = await startFakeService(options);
    use({ service: running, dir: await tempDir() });
  });
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });
}

/**
 * The sample's five prototypes with the two ordinary ones cut to a page, a layer and a discussion
 * each, and small page images (111 requests, not 197): for tests that need the sample's kinds of
 * prototype, not its size.
 */
export const SMALL_SAMPLE = {
  pagesPerPrototype: 1,
  elementsPerPage: 1,
  layersPerPrototype: 1,
  elementsPerLayer: 1,
  discussionsPerPrototype: 1,
  pngWidth: 80,
  pngHeight: 60,
} as const;
