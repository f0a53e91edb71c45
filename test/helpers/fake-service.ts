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
