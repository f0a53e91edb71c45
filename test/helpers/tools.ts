import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/**
 * The programs outside Node that tests use to judge our output, with the Debian package that
 * provides each. .ci/run installs them all; a test that needs one fails when it is missing,
 * naming the package, instead of skipping (a skipped check passes a run it never judged).
 */
/**
 * Headless Chromium as the Chromium project ships it for automation (Debian's chromium-headless-shell,
 * the build Playwright runs for headless tests): the browser's own Blink, V8 and Skia without its
 * windowing and UI processes. A page costs it less than half the CPU the full browser's headless
 * mode took, and the browser tests are a fifth of the suite's CPU.
 */
export const CHROMIUM = '/usr/bin/chromium-headless-shell';

export const TOOL_PACKAGES = {
  unzip: 'unzip',
  bsdtar: 'libarchive-tools',
  '7z': 'p7zip-full',
  java: 'default-jre-headless',
  python3: 'python3',
  openssl: 'openssl',
  [CHROMIUM]: 'chromium-headless-shell',
  '/usr/bin/script': 'bsdutils',
} as const;

export type Tool = keyof typeof TOOL_PACKAGES;

/** The error a test fails with when `tool` is not installed. */
export function missingTool(tool: Tool): Error {
  return new Error(
    `${tool} is not installed: install the Debian package ${TOOL_PACKAGES[tool]} (apt-get install -y ${TOOL_PACKAGES[tool]}; .ci/run does)`,
  );
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** True when `tool` (a name looked up on PATH, or an absolute path) can be run. */
export function hasTool(tool: Tool): boolean {
  if (isAbsolute(tool)) return executable(tool);
  return (process.env['PATH'] ?? '').split(delimiter).some((dir) => dir !== '' && executable(join(dir, tool)));
}

/** Throws `missingTool` unless `tool` can be run: call it first in a test that needs the tool. */
export function requireTool(tool: Tool): void {
  if (!hasTool(tool)) throw missingTool(tool);
}

let interpreter: string | undefined;

/**
 * The interpreter `python3` on PATH names, asked once for the worker and run directly after: a
 * version manager's shim in its place (pyenv's is a bash script that runs pyenv first) costs
 * each start a tenth of a second of CPU and a third of one of the wall, more than most scripts here.
 */
export function python(): string {
  if (!hasTool('python3')) throw missingTool('python3');
  interpreter ??= execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  return interpreter;
}
