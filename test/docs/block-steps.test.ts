import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { lstat, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blockSteps, runBlock, type BlockStep } from '../helpers/doc-examples.js';
import { tempDir } from '../helpers/temp.js';
import { TOOL_VERSION } from '../../src/core/version.js';

const cli = (...args: string[]): Extract<BlockStep, { kind: 'cli' }> => ({
  kind: 'cli',
  args,
  text: `rabbit-export ${args.join(' ')}`,
});
const shell = (code: string): BlockStep => ({ kind: 'shell', code });

describe('a block, in steps: lone rabbit-export commands in-process, the rest in bash', () => {
  it.each<[string, string, BlockStep[]]>([
    ['a lone command', 'rabbit-export verify team.zip', [cli('verify', 'team.zip')]],
    [
      'words bash passes on unchanged',
      'rabbit-export search team.zip 日本 --prototype 17 --formats json,html --base-url 127.0.0.1:8080 --sample 5%',
      [
        cli(
          'search',
          'team.zip',
          '日本',
          '--prototype',
          '17',
          '--formats',
          'json,html',
          '--base-url',
          '127.0.0.1:8080',
          '--sample',
          '5%',
        ),
      ],
    ],
    [
      'a trailing comment, dropped as bash drops it',
      'rabbit-export verify team.zip --against-live   # everything',
      [
        {
          kind: 'cli',
          args: ['verify', 'team.zip', '--against-live'],
          text: 'rabbit-export verify team.zip --against-live   # everything',
        },
      ],
    ],
    [
      'stdout redirected to a plain file name',
      'rabbit-export links team.zip --format csv > links.csv',
      [
        {
          ...cli('links', 'team.zip', '--format', 'csv'),
          text: 'rabbit-export links team.zip --format csv > links.csv',
          stdoutTo: 'links.csv',
        },
      ],
    ],
    [
      'stdout redirected with no blank after >, and a comment',
      'rabbit-export links team.zip >out/links.txt  # all',
      [
        {
          kind: 'cli',
          args: ['links', 'team.zip'],
          text: 'rabbit-export links team.zip >out/links.txt  # all',
          stdoutTo: 'out/links.txt',
        },
      ],
    ],
    [
      'stdout appended',
      'rabbit-export links team.zip >> links.csv',
      [shell('rabbit-export links team.zip >> links.csv')],
    ],
    [
      'stderr redirected',
      'rabbit-export verify team.zip 2> err.txt',
      [shell('rabbit-export verify team.zip 2> err.txt')],
    ],
    [
      'stdout and stderr redirected',
      'rabbit-export verify team.zip &> all.txt',
      [shell('rabbit-export verify team.zip &> all.txt')],
    ],
    [
      'a forced overwrite',
      'rabbit-export links team.zip >| links.csv',
      [shell('rabbit-export links team.zip >| links.csv')],
    ],
    ['two redirects', 'rabbit-export links team.zip > a > b', [shell('rabbit-export links team.zip > a > b')]],
    ['a redirect to a variable', 'rabbit-export links team.zip > $OUT', [shell('rabbit-export links team.zip > $OUT')]],
    [
      'a redirect to a quoted name',
      'rabbit-export links team.zip > "a b"',
      [shell('rabbit-export links team.zip > "a b"')],
    ],
    [
      'a redirect to the home folder',
      'rabbit-export links team.zip > ~/l.csv',
      [shell('rabbit-export links team.zip > ~/l.csv')],
    ],
    [
      'a redirect then a pipe',
      'rabbit-export links team.zip > a | cat',
      [shell('rabbit-export links team.zip > a | cat')],
    ],
    [
      'an archive on stdout, redirected',
      'rabbit-export export --out - --quiet > piped.zip',
      [shell('rabbit-export export --out - --quiet > piped.zip')],
    ],
    ['a pipe', 'rabbit-export ls team.zip --json | jq .', [shell('rabbit-export ls team.zip --json | jq .')]],
    [
      'a plain command, and then a lone one',
      'mkdir -p b && rabbit-export backup --dir b',
      [{ ...cli('backup', '--dir', 'b'), text: 'mkdir -p b && rabbit-export backup --dir b', first: 'mkdir -p b' }],
    ],
    [
      'a second command after ;',
      'mkdir -p b; rabbit-export backup --dir b',
      [shell('mkdir -p b; rabbit-export backup --dir b')],
    ],
    [
      'a second command after ||',
      'test -d b || rabbit-export backup --dir b',
      [shell('test -d b || rabbit-export backup --dir b')],
    ],
    [
      'two commands before it',
      'mkdir a && mkdir b && rabbit-export backup --dir b',
      [shell('mkdir a && mkdir b && rabbit-export backup --dir b')],
    ],
    [
      'a folder changed before it',
      'cd b && rabbit-export backup --dir .',
      [shell('cd b && rabbit-export backup --dir .')],
    ],
    [
      'a variable before it',
      'test -d $B && rabbit-export backup --dir b',
      [shell('test -d $B && rabbit-export backup --dir b')],
    ],
    [
      'a quoted word before it',
      "mkdir 'a b' && rabbit-export backup --dir b",
      [shell("mkdir 'a b' && rabbit-export backup --dir b")],
    ],
    [
      'a command after it that is not lone',
      'mkdir b && rabbit-export ls a.zip | head',
      [shell('mkdir b && rabbit-export ls a.zip | head')],
    ],
    [
      'a status read later in the block',
      'mkdir b && rabbit-export backup --dir b\necho $?',
      [shell('mkdir b && rabbit-export backup --dir b\necho $?')],
    ],
    [
      'a quoted word',
      "rabbit-export search team.zip 'two words'",
      [shell("rabbit-export search team.zip 'two words'")],
    ],
    ['a variable', 'rabbit-export export --out $NAME', [shell('rabbit-export export --out $NAME')]],
    ['a glob', 'rabbit-export verify *.zip', [shell('rabbit-export verify *.zip')]],
    ['a home folder', 'rabbit-export verify ~/team.zip', [shell('rabbit-export verify ~/team.zip')]],
    ['an archive on stdout', 'rabbit-export export --out - --quiet', [shell('rabbit-export export --out - --quiet')]],
    ['a server, which runs until stopped', 'rabbit-export serve --port 0', [shell('rabbit-export serve --port 0')]],
    ['a viewer, which runs until stopped', 'rabbit-export view team.zip', [shell('rabbit-export view team.zip')]],
    ['another program', 'rabbit-exporter verify team.zip', [shell('rabbit-exporter verify team.zip')]],
    [
      'in order, comment and blank lines between commands left out',
      'rabbit-export export --out a.zip\n\n# then\nunzip -tq a.zip\nls\nrabbit-export verify a.zip\n# exit 0',
      [cli('export', '--out', 'a.zip'), shell('\n# then\nunzip -tq a.zip\nls'), cli('verify', 'a.zip')],
    ],
    [
      'after a line that changes the folder, in bash',
      'rabbit-export export --out a.zip\ncd sub\nrabbit-export verify a.zip',
      [cli('export', '--out', 'a.zip'), shell('cd sub\nrabbit-export verify a.zip')],
    ],
    [
      'after a variable exported, in bash',
      'export TZ=UTC\nrabbit-export verify a.zip',
      [shell('export TZ=UTC\nrabbit-export verify a.zip')],
    ],
    [
      'after a variable set, in bash',
      'mkdir x; NAME=a.zip\nrabbit-export verify a.zip',
      [shell('mkdir x; NAME=a.zip\nrabbit-export verify a.zip')],
    ],
    [
      'after a function defined, in bash',
      'check() { unzip -tq "$1"; }\nrabbit-export verify a.zip\ncheck a.zip',
      [shell('check() { unzip -tq "$1"; }\nrabbit-export verify a.zip\ncheck a.zip')],
    ],
    [
      'a double quote inside single quotes, which closes nothing',
      'rabbit-export convert a.zip --to wacz --out w\nunzip -p w/a.wacz datapackage.json | grep -c \'"hash": "sha256:\'',
      [
        cli('convert', 'a.zip', '--to', 'wacz', '--out', 'w'),
        shell('unzip -p w/a.wacz datapackage.json | grep -c \'"hash": "sha256:\''),
      ],
    ],
    [
      'quotes escaped or in a comment',
      "echo it\\'s \"a \\\" b\" $'c\\'d' # don't\nrabbit-export verify a.zip",
      [shell("echo it\\'s \"a \\\" b\" $'c\\'d' # don't"), cli('verify', 'a.zip')],
    ],
    [
      'a subshell that changes its own folder only',
      '(cd backups && sha256sum -c SHA256SUMS)\nrabbit-export verify a.zip',
      [shell('(cd backups && sha256sum -c SHA256SUMS)'), cli('verify', 'a.zip')],
    ],
  ])('%s', (_, code, steps) => {
    expect(blockSteps(code)).toEqual(steps);
  });

  it.each([
    ['a line continued', 'rabbit-export export \\\n  --out a.zip\nrabbit-export verify a.zip'],
    ['a pipe continued', 'rabbit-export ls a.zip |\n  head\nrabbit-export verify a.zip'],
    ['a quote across lines', "printf 'a\nrabbit-export verify a.zip\n'"],
    ['a double quote across lines', 'echo "it\'s\nrabbit-export verify a.zip\n"'],
    ['a quote escaped, then one left open', "echo \\' 'a\nrabbit-export verify a.zip\n'"],
    ['a backtick across lines', 'echo `date\nrabbit-export verify a.zip\n`'],
    ['a command substituted across lines', 'echo $(date\nrabbit-export verify a.zip\n)'],
    ['a command substituted inside quotes', 'echo "$(echo \')\nrabbit-export verify a.zip\n\')"'],
    ['a # inside a word, which is no comment', "echo a#'b\nrabbit-export verify a.zip\n'"],
    ['a job left running', 'sleep 60 &\nrabbit-export verify a.zip\nkill %1'],
    ['a here-document', 'cat <<EOF\nrabbit-export verify a.zip\nEOF'],
    ['a loop', 'for n in 1 2\ndo\nrabbit-export verify a.zip\ndone'],
    ['a condition', 'if test -f a.zip\nthen\nrabbit-export verify a.zip\nfi'],
    ['a group', '{\nrabbit-export verify a.zip\n} > out'],
    ['an early exit', 'exit 0\nrabbit-export verify a.zip'],
  ])('whole in bash with %s', (_, code) => {
    expect(blockSteps(code)).toEqual([shell(code)]);
  });
});

describe('a block run in steps', () => {
  it('ends at the first step that fails, as under set -e, with its status and what it printed', async () => {
    const cwd = await tempDir();
    const block = {
      file: 'steps.md',
      line: 1,
      expectedExit: 0,
      code: 'echo before\nrabbit-export verify nowhere.zip\ntouch after',
    };
    const run = await runBlock(block, cwd, { PATH: process.env['PATH'] ?? '' }, 10_000);
    expect(run.exitCode).toBe(1);
    expect(run.output).toContain('before');
    expect(run.output).toContain('nowhere.zip');
    expect(existsSync(join(cwd, 'after'))).toBe(false);
  });

  it('writes a redirected stdout to its file byte for byte, the file made before the command runs', async () => {
    const cwd = await tempDir();
    await writeFile(join(cwd, 'old.txt'), 'longer text that the redirect must empty first\n');
    const block = {
      file: 'steps.md',
      line: 1,
      expectedExit: 0,
      code: 'rabbit-export --version > version.txt\nrabbit-export verify nowhere.zip > old.txt',
    };
    // No rabbit-export on PATH: bash would answer 127, and write nothing to version.txt.
    const run = await runBlock(block, cwd, { PATH: '/usr/bin:/bin' }, 10_000);
    expect(run.exitCode, run.output).toBe(1);
    expect(run.output).not.toMatch(/^\d+\.\d+\.\d+/m);
    expect(await readFile(join(cwd, 'version.txt'))).toEqual(Buffer.from(`${TOOL_VERSION}\n`));
    // verify says what failed on stdout: the file holds that, and nothing it held before.
    const failed = await readFile(join(cwd, 'old.txt'), 'utf8');
    expect(failed).toContain('nowhere.zip');
    expect(failed).not.toContain('longer text');
  });

  it.each([
    [
      'the command left of && fails mid-block: skipped, and the next line runs',
      'test -d none && rabbit-export --version > v.txt\ntouch after',
      0,
    ],
    [
      "the command left of && fails last: its status is the block's",
      'touch before\ntest -d none && rabbit-export --version > v.txt',
      1,
    ],
    [
      'the command left of && succeeds: the command runs',
      'mkdir made && rabbit-export --version > v.txt\ntouch after',
      0,
    ],
  ])('as bash, when %s', async (_, code, exitCode) => {
    const steps = blockSteps(code);
    expect(steps.some((step) => step.kind === 'cli' && step.first !== undefined)).toBe(true);
    const inSteps = await tempDir();
    const inBash = await tempDir();
    const run = await runBlock(
      { file: 'steps.md', line: 1, expectedExit: 0, code },
      inSteps,
      { PATH: '/usr/bin:/bin' },
      10_000,
    );
    // The same block through bash itself, rabbit-export a function that prints what the CLI would.
    const bash = spawnSync(
      'bash',
      ['-e', '-o', 'pipefail', '-c', `rabbit-export() { echo ${TOOL_VERSION}; }\n${code}`],
      {
        cwd: inBash,
        env: { PATH: '/usr/bin:/bin' },
      },
    );
    expect(bash.status).toBe(exitCode);
    expect(run.exitCode, run.output).toBe(exitCode);
    const listing = async (dir: string): Promise<[string, string][]> =>
      Promise.all(
        (await readdir(dir))
          .sort()
          .map(async (name): Promise<[string, string]> => [
            name,
            (await lstat(join(dir, name))).isDirectory() ? 'dir' : await readFile(join(dir, name), 'utf8'),
          ]),
      );
    expect(await listing(inSteps)).toEqual(await listing(inBash));
  });

  it('runs a lone command in-process, in the block folder', async () => {
    const cwd = await tempDir();
    await writeFile(join(cwd, 'here.zip'), 'not a zip');
    const block = {
      file: 'steps.md',
      line: 1,
      expectedExit: 1,
      code: 'rabbit-export --version\nrabbit-export verify here.zip',
    };
    // No rabbit-export on PATH: bash would answer 127.
    const run = await runBlock(block, cwd, { PATH: '/usr/bin:/bin' }, 10_000);
    expect(run.exitCode, run.output).toBe(1);
    expect(run.output).toMatch(/^\d+\.\d+\.\d+\n/);
    expect(run.output).toContain('here.zip is not a zip archive');
  });
});
