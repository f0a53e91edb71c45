import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

// The whole command line in-process (src/cli/program.ts, as main.ts runs it): the help's width is
// the program's, read from COLUMNS off a terminal.
const CLI = { register: 'all' } as const;

/** Every command the top-level help lists, read from that help rather than kept in a second list. */
async function commandNames(): Promise<string[]> {
  const { stdout } = await runCli(['--help'], { ...CLI, env: { COLUMNS: '80' } });
  const section = stdout.slice(stdout.indexOf('Commands:'));
  return [...section.matchAll(/^ {2}([a-z]+)\b/gm)]
    .map((match) => match[1] as string)
    .filter((name) => name !== 'help');
}

describe('--help fits 80 columns', () => {
  it('every command, prose and examples included, off a terminal with COLUMNS=80', async () => {
    const names = await commandNames();
    expect(names).toEqual(expect.arrayContaining(['export', 'backup', 'serve', 'links', 'ls', 'diff', 'restore']));
    for (const args of [['--help'], ...names.map((name) => [name, '--help'])]) {
      const run = await runCli(args, { ...CLI, env: { COLUMNS: '80' } });
      expect(run.code, args.join(' ')).toBe(0);
      expect(run.stdout, args.join(' ')).toContain('Usage:');
      const wide = run.stdout.split('\n').filter((line) => [...line].length > 80);
      expect(wide, args.join(' ')).toEqual([]);
    }
  });

  it('takes a wider width when there is one (COLUMNS off a terminal)', async () => {
    const narrow = await runCli(['export', '--help'], { ...CLI, env: { COLUMNS: '80' } });
    const wide = await runCli(['export', '--help'], { ...CLI, env: { COLUMNS: '160' } });
    const longest = (text: string): number => Math.max(...text.split('\n').map((line) => line.length));
    expect(longest(narrow.stdout)).toBeLessThanOrEqual(80);
    expect(longest(wide.stdout)).toBeGreaterThan(80);
    expect(wide.stdout.split('\n').length).toBeLessThan(narrow.stdout.split('\n').length);
  });
});
