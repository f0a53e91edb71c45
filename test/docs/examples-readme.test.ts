import { describe } from 'vitest';
import { pageRunsAsWritten, sampleService } from './page-examples.js';

// A page long enough to deserve a test file of its own (see PAGES_WITH_A_FILE).
describe('every documented command runs as written', () => {
  pageRunsAsWritten(sampleService(), 'README.md');
});
