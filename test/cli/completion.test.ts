import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerCompletion } from '../../src/cli/commands/completion.js';
import { formatNames } from '../../src/convert/formats/registry.js';
import type { CliIO } from '../../src/cli/run.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** Runs a shell the way a test needs it; a missing shell fails the test, naming the Debian package. */
function shell(name: 'bash' | 'zsh' | 'fish', args: string[], cwd: string): { status: number | null; stdout: string } {
  const run = spawnSync(name, args, { cwd, encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', HOME: cwd } });
  if (run.error) throw new Error(`${name} cannot run (${run.error.message}): apt-get install -y ${name}`);
  expect(run.stderr).toBe('');
  return { status: run.status, stdout: run.stdout };
}

/** What bash offers for the command line `words` (the last one being completed) with the script in `dir` sourced. */
function bashOffers(dir: string, words: string[]): string[] {
  const body = `source ./completion.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rabbit_export; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const run = shell('bash', ['-c', body, 'bash', ...words], dir);
  expect(run.status).toBe(0);
  return run.stdout.split('\n').filter((line) => line !== '');
}

/** What fish offers (the candidates, without their descriptions) for the command line `line`. */
function fishOffers(dir: string, line: string): string[] {
  const run = shell('fish', ['--no-config', '-c', `source ./completion.fish; complete -C '${line}'`], dir);
  expect(run.status).toBe(0);
  return run.stdout
    .split('\n')
    .filter((entry) => entry !== '')
    .map((entry) => entry.split('\t')[0] as string);
}

async function scriptOf(shellName: string, dir: string): Promise<string> {
  // The whole command line in-process: the script lists every command main.ts registers.
  const run = await runCli(['completion', shellName], { register: 'all' });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  await writeFile(join(dir, `completion.${shellName}`), run.stdout);
  return run.stdout;
}

const COMMANDS = ['export', 'verify', 'ls', 'serve', 'demo', 'view', 'backup', 'diff', 'restore', 'convert', 'links'];

describe('completion bash|zsh|fish', () => {
  it('bash: completes the commands, the flags of export, files for --out and the choices of --format', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'team.zip'), '');
    await scriptOf('bash', dir);
    expect(bashOffers(dir, ['rabbit-export', ''])).toEqual(expect.arrayContaining([...COMMANDS, 'completion', 'help']));
    expect(bashOffers(dir, ['rabbit-export', 'ex'])).toEqual(['export']);
    expect(bashOffers(dir, ['rabbit-export', 'export', '--si'])).toEqual(['--since']);
    expect(bashOffers(dir, ['rabbit-export', 'export', '--out', 'te'])).toEqual(['team.zip']);
    // An archive is expected: *.zip, and folders to reach one, not every file.
    await mkdir(join(dir, 'nightly'));
    expect(bashOffers(dir, ['rabbit-export', 'verify', '']).sort()).toEqual(['nightly', 'team.zip']);
    expect(bashOffers(dir, ['rabbit-export', 'diff', 'team.zip', '']).sort()).toEqual(['nightly', 'team.zip']);
    // A name with a space is one name, offered whole, not two words.
    await writeFile(join(dir, 'Team Export.zip'), '');
    await writeFile(join(dir, 'key file.txt'), '');
    expect(bashOffers(dir, ['rabbit-export', 'verify', 'Te'])).toEqual(['Team Export.zip']);
    expect(bashOffers(dir, ['rabbit-export', 'export', '--api-key-file', 'k'])).toEqual(['key file.txt']);
    expect(bashOffers(dir, ['rabbit-export', 'links', 'team.zip', '--format', ''])).toEqual([
      'csv',
      'json',
      'sed',
      'nginx',
      'apache',
    ]);
    // --format=s: bash hands the '=' over as a word of its own.
    expect(bashOffers(dir, ['rabbit-export', 'links', 'team.zip', '--format', '=', 's'])).toEqual(['sed']);
    expect(bashOffers(dir, ['rabbit-export', 'convert', 'team.zip', '--to', 'p'])).toEqual(['pdf']);
  });

  it('is made from the commands as defined when it runs: a new command and flag complete at once', async () => {
    const dir = await tempDir();
    const register = (program: Command, io: CliIO): void => {
      program
        .command('frob')
        .description("turns [the] 'widget': all of it")
        .addOption(new Option('--widget <kind>', 'which one').choices(['cog', 'gear']))
        .option('--log <file>', 'where');
      registerCompletion(program, io);
    };
    for (const name of ['bash', 'zsh', 'fish']) {
      const run = await runCli(['completion', name], { register });
      expect(run.code).toBe(0);
      await writeFile(join(dir, `completion.${name}`), run.stdout);
    }
    const bash = (words: string[]): string[] => bashOffers(dir, ['rabbit-export', ...words]);
    expect(bash([''])).toEqual(['frob', 'completion', 'help']);
    expect(bash(['frob', '--'])).toEqual(['--widget', '--log', '--help']);
    expect(bash(['frob', '--widget', ''])).toEqual(['cog', 'gear']);
    expect(fishOffers(dir, 'rabbit-export frob --widget ')).toEqual(['cog', 'gear']);
    expect(shell('zsh', ['-n', 'completion.zsh'], dir).status).toBe(0);
  });

  it('zsh: the script parses, and sourced after compinit it completes rabbit-export', async () => {
    const dir = await tempDir();
    const script = await scriptOf('zsh', dir);
    expect(script.startsWith('#compdef rabbit-export\n')).toBe(true);
    expect(shell('zsh', ['-n', 'completion.zsh'], dir).status).toBe(0);
    const loaded = shell(
      'zsh',
      ['-f', '-c', 'autoload -U compinit; compinit -u -D; source ./completion.zsh; print -r -- $_comps[rabbit-export]'],
      dir,
    );
    expect(loaded.stdout).toBe('_rabbit_export\n');
  });

  it('fish: completes the commands, the flags of export and the choices of --to', async () => {
    const dir = await tempDir();
    await scriptOf('fish', dir);
    expect(shell('fish', ['--no-config', '-n', 'completion.fish'], dir).status).toBe(0);
    expect(fishOffers(dir, 'rabbit-export ')).toEqual(expect.arrayContaining([...COMMANDS, 'completion']));
    expect(fishOffers(dir, 'rabbit-export export --sin')).toEqual(['--since']);
    expect(fishOffers(dir, 'rabbit-export convert team.zip --to ')).toEqual([...formatNames()].sort());
    await writeFile(join(dir, 'team.zip'), '');
    await writeFile(join(dir, 'notes.txt'), '');
    expect(fishOffers(dir, 'rabbit-export verify ')).toEqual(['team.zip']);
  });

  it('refuses a shell it has no script for (usage, exit 2)', async () => {
    const run = await runCli(['completion', 'tcsh'], { register: 'all' });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
  });
});
