import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConvert } from '../../src/cli/commands/convert.js';
import { registerLs } from '../../src/cli/commands/ls.js';
import { printable } from '../../src/cli/terminal-text.js';
import { exportAccount } from '../../src/export/export-account.js';
import { startFakeService } from '../../src/fake-service/index.js';
import { runCli } from '../helpers/cli.js';

/**
 * A prototype name that would read as another on a terminal: a right-to-left override makes
 * `invoice\u202Efdp.exe` show as `invoiceexe.pdf`, isolates and marks reorder what follows, a
 * zero-width space hides a difference, ESC and BEL drive the terminal. Every command that prints
 * the name shows each as a visible `<U+XXXX>`.
 */
const NAME = 'invoice\u202Efdp.exe \u2067x\u2069 \u200Ez\u200B \u001b]0;title\u0007';
const SHOWN = 'invoice<U+202E>fdp.exe <U+2067>x<U+2069> <U+200E>z<U+200B> <U+001B>]0;title<U+0007>';
/** Nothing a terminal would act on or hide: controls, format characters, line separators. */
const HIDDEN = /(?!\u200d)[\p{Cc}\p{Cf}\u2028\u2029]/u;

let dir: string;
let archive: string;

describe('names from an archive reach the terminal escaped', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-terminal-text-'));
    const service = await startFakeService({ seed: 1, now: () => 1_300_000_000_000 });
    try {
      service.store.renamePrototype(17, NAME);
      archive = join(dir, 'archive.zip');
      await exportAccount({ out: archive, baseUrl: service.baseUrl, keys: [service.keys.readOnly] });
    } finally {
      await service.close();
    }
  }, 120_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('printable turns every bidi control and invisible format character into <U+XXXX>', () => {
    for (const char of ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069']) {
      expect(printable(`a${char}b`)).toBe(`a<U+${char.codePointAt(0)!.toString(16).toUpperCase()}>b`);
    }
    expect(printable('\u200E\u200F\u061C\uFEFF\u2028')).toBe('<U+200E><U+200F><U+061C><U+FEFF><U+2028>');
    expect(printable('family 👨‍👩‍👧, line\nbreak')).toBe('family 👨‍👩‍👧, line break');
  });

  it('ls shows the name escaped', async () => {
    const run = await runCli(['ls', archive], { register: registerLs });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('invoice<U+202E>fdp.exe');
    expect(run.stdout.replace(/\n/g, '')).not.toMatch(HIDDEN);
  });

  it('convert shows the name escaped', async () => {
    const run = await runCli(['convert', archive, '--to', 'svg', '--out', join(dir, 'svg'), '--prototype', '17'], {
      register: registerConvert,
    });
    expect(run.stdout + run.stderr).toContain(SHOWN);
    expect((run.stdout + run.stderr).replace(/\n/g, '')).not.toMatch(HIDDEN);
  });
});
