import { describe, expect, it } from 'vitest';
import { optionNameOf } from '../../src/cli/unknown-option.js';
import { runCli } from '../helpers/cli.js';

/**
 * A mistyped flag that carries the key (`--api-kye=KEY`) is an unknown option, which commander
 * echoes as typed. The key must not reach the terminal, a log or the --json record: the option is
 * named without its value, and commander's suggestion for the name is kept.
 */
const KEY = 'rk_live_4f9c2d7e8a1b3c5d';

describe('an unknown option is named without its value', () => {
  it.each([
    [['export', '--api-kye=' + KEY, '--out', 'x.zip'], "error: unknown option '--api-kye'\n"],
    [['export', '--out', 'x.zip', '--api-kye', KEY], "error: unknown option '--api-kye'\n"],
    [['export', '--out', 'x.zip', `-x${KEY}`], "error: unknown option '-x'\n"],
    [['export', '--out', 'x.zip', `-qx${KEY}`], "error: unknown option '-x'\n"],
    [[`--api-kye=${KEY}`, 'export', '--out', 'x.zip'], "error: unknown option '--api-kye'\n"],
    [['verify', 'team.zip', `--api-kye=${KEY}`], "error: unknown option '--api-kye'\n"],
  ])('%j: exit 2, the name alone', async (args, said) => {
    const run = await runCli(args, { register: 'all' });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`${said}(run with --help for usage)\n`);
  });

  it("keeps commander's suggestion for the name, which the value used to hide", async () => {
    const run = await runCli(['export', '--out', 'x.zip', `--concurency=${KEY}`], { register: 'all' });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "error: unknown option '--concurency'\n(Did you mean --concurrency?)\n(run with --help for usage)\n",
    );
    const plain = await runCli(['export', '--out', 'x.zip', '--concurency'], { register: 'all' });
    expect(plain.stderr).toBe(run.stderr);
  });

  it('keeps the key out of the --json record too', async () => {
    const run = await runCli(['export', '--out', 'x.zip', '--json', `--api-kye=${KEY}`], { register: 'all' });
    expect(run.code).toBe(2);
    expect(run.stdout + run.stderr).not.toContain(KEY);
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: false,
      exitCode: 2,
      error: { code: 'USAGE', message: "unknown option '--api-kye'" },
    });
  });

  it.each([
    ['--api-kye=SECRET', '--api-kye'],
    ["--api-kye=SE'CRET", '--api-kye'],
    ['--api-kye', '--api-kye'],
    ['-xSECRET', '-x'],
    ['--\u001b[2J=SECRET', '--'],
    ['--api-key:SECRET', '--api-key'],
    ['--api-key SECRET', '--api-key'],
    ['--SECRET', '--SECRET'],
  ])('optionNameOf(%j) is %j', (typed, name) => {
    expect(optionNameOf(`${typed}'`)).toBe(name);
  });
});
