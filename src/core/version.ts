import pkg from '../../package.json' with { type: 'json' };

export const TOOL_NAME = pkg.name;
export const TOOL_VERSION = pkg.version;
