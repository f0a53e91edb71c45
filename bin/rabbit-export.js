#!/usr/bin/env node
// dist/ is built by `npm run build` (npm test and npm run demo build first); a clone that has not
// built yet gets a sentence rather than a module-not-found stack.
import('../dist/cli/main.js').catch((error) => {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/cli/main.js')) {
    process.stderr.write('rabbit-export: not built yet; run `npm run build` in the rabbit-export folder first\n');
    process.exit(1);
  }
  throw error;
});
