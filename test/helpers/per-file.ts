import { afterEach } from 'vitest';
import { removeTempDirs } from './temp.js';

// A setup file runs again for every test file; a hook at the top of a shared helper would not, once
// files share one module graph (isolate: false), and only the first file to import it would clean up.
afterEach(removeTempDirs);
