import { createRequire } from 'node:module';

// Two levels up from both src/core and dist/core: the package's own package.json.
const pkg = createRequire(import.meta.url)('../../package.json') as { name: string; version: string };

export const TOOL_NAME = pkg.name;
export const TOOL_VERSION = pkg.version;
