import { link, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { runCli } from '../helpers/cli.js';
import { PROTO, damagedArchiveFixture, errorOf, exportPrototype, liveContents, sha256 } from './restore-helpers.js';

const fixture = damagedArchiveFixture();

describe('restore never writes its journal into a file that is not one', () => {
  it('--journal naming the archive itself (or a hard link to it) is refused before anything is sent or written', async () => {
    const before = { archive: await sha256(fixture.archive), live: liveContents(fixture.service) };
    const linked = join(fixture.dir, 'same.jsonl');
    await link(fixture.archive, linked);
    for (const journal of [fixture.archive, linked]) {
      for (const extra of [[], ['--dry-run']]) {
        const run = await fixture.restore(['--journal', journal, ...extra], { json: true });
        expect({ journal, extra, code: run.code }).toEqual({ journal, extra, code: 2 });
        const error = errorOf(run.stdout);
        expect(error.code).toBe('NOT_A_JOURNAL');
        expect(error.message).toContain('is the archive being restored');
        expect(error.next).toMatch(/--journal/);
        expect(error.next).not.toMatch(/--force|move/);
      }
    }
    expect(await sha256(fixture.archive)).toBe(before.archive);
    expect(fixture.service.stats.requests).toBe(0);
    expect(liveContents(fixture.service)).toEqual(before.live);
    expect((await readdir(fixture.dir)).sort()).toEqual(['a.zip', 'same.jsonl']);
  });

  it.each([
    ['a text file', 'my notes\nabout the restore\n'],
    ['JSON lines of something else', '{"t":"x","a":1}\n{"t":"y"}\n'],
    ['a journal missing its first line', '{"t":"begin","op":"update","parent":"page0001","archived":"element1"}\n'],
    ['a start line that names no service', '{"t":"start","prototype":"1001","at":"x"}\n'],
    ['blank lines', '\n\n'],
    ['bytes that are not text', '\u0000\u00ff\u0001PK\u0003\u0004'],
  ])('a --journal file holding %s is refused and left as it was', async (_what, content) => {
    const journal = join(fixture.dir, 'notes.jsonl');
    await writeFile(journal, content);
    const before = { file: await sha256(journal), live: liveContents(fixture.service) };
    const run = await fixture.restore(['--journal', journal], { json: true });
    expect(run.code).toBe(2);
    const error = errorOf(run.stdout);
    expect(error.code).toBe('NOT_A_JOURNAL');
    expect(error.message).toContain(`${journal} is not a restore journal`);
    expect(error.next).toMatch(/--journal/);
    // A file the user named is theirs to keep: another name is the way on, never moving it.
    expect(error.next).not.toMatch(/\bmv\b|\brm\b/);
    // In words, on stderr too: the message, then the next step.
    expect(run.stderr).toContain(`\nnext: ${error.next}\n`);
    expect(await sha256(journal)).toBe(before.file);
    expect(fixture.service.stats.requests).toBe(0);
    expect(liveContents(fixture.service)).toEqual(before.live);
    expect((await readdir(fixture.dir)).sort()).toEqual(['a.zip', 'notes.jsonl']);
  });

  it('an empty --journal file is taken as a new journal', async () => {
    const journal = join(fixture.dir, 'new.jsonl');
    await writeFile(journal, '');
    const run = await fixture.restore(['--journal', journal]);
    expect(run.code).toBe(0);
    const first = JSON.parse((await readFile(journal, 'utf8')).split('\n')[0] ?? '') as { t: string };
    expect(first.t).toBe('start');
  });

  it("sets aside a journal of another service's restore, writes its own, and says where the old one went", async () => {
    const beside = join(dirname(fixture.archive), `.a.zip.restore-${PROTO}.jsonl`);
    const other = '{"t":"start","baseUrl":"https://elsewhere.example","prototype":"9","at":"x"}\n';
    await writeFile(beside, other);
    const run = await fixture.restore();
    expect(run.code).toBe(0);
    const aside = (await readdir(fixture.dir)).filter((name) => name.endsWith('.old'));
    expect(aside).toHaveLength(1);
    expect(await readFile(join(fixture.dir, aside[0]!), 'utf8')).toBe(other);
    expect(run.stderr).toContain(`a journal of another restore was moved to ${join(fixture.dir, aside[0]!)}`);
  });

  it("stops, saying so, when another restore's journal cannot be moved aside, and appends nothing to it", async () => {
    const beside = join(dirname(fixture.archive), `.a.zip.restore-${PROTO}.jsonl`);
    const other = '{"t":"start","baseUrl":"https://elsewhere.example","prototype":"9","at":"x"}\n';
    await writeFile(beside, other);
    // The name it would be moved to is a folder that is not empty: the rename fails, as root's would not otherwise.
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now);
    try {
      await mkdir(join(`${beside}.${now}.old`, 'full'), { recursive: true });
      const run = await fixture.restore([], { json: true });
      expect(run.code).not.toBe(0);
      const error = errorOf(run.stdout);
      expect(error.message).toContain('cannot move the journal of another restore');
      expect(error.next).toMatch(/--journal/);
      expect(error.next).not.toMatch(/--out/);
      expect(run.stderr).not.toContain('was moved to');
    } finally {
      clock.mockRestore();
    }
    expect(await readFile(beside, 'utf8')).toBe(other);
    // It read what is live to plan, and wrote nothing.
    for (const method of ['POST', 'PUT', 'DELETE']) expect(fixture.service.stats.byMethod.get(method) ?? 0).toBe(0);
  });

  it("prints the paths of its journals, which hold the archive's name, with no terminal escapes in them", async () => {
    // A name that would set the terminal's title and colour the rest of its screen red.
    const hostile = 'night\u001b]0;owned\u0007\u001b[31m';
    const named = await exportPrototype(fixture.service, fixture.dir, `${hostile}.zip`);
    const removeOne = (): void =>
      fixture.service.store.deleteElement(
        PROTO,
        'layer1',
        fixture.service.store.layer(PROTO, 'layer1')!.elements[0]!.id,
      );
    removeOne();
    const env = { RABBIT_API_KEY: fixture.service.keys.readWrite, RABBIT_BASE_URL: fixture.service.baseUrl };
    // The journal of another service's restore where this one's goes by default: moved aside, and said.
    const beside = join(fixture.dir, `.${hostile}.zip.restore-${PROTO}.jsonl`);
    await writeFile(beside, '{"t":"start","baseUrl":"https://elsewhere.example","prototype":"9","at":"x"}\n');
    const aside = await runCli(['restore', named, '--prototype', PROTO], { register: registerRestore, env });
    expect(aside.code).toBe(0);
    expect(aside.stderr).toContain('a journal of another restore was moved to ');
    // A journal named with --journal is kept, and its path printed with the outcome.
    removeOne();
    const kept = await runCli(
      ['restore', named, '--prototype', PROTO, '--journal', join(fixture.dir, `${hostile}.jsonl`)],
      {
        register: registerRestore,
        env,
      },
    );
    expect(kept.code).toBe(0);
    expect(kept.stdout).toContain(`journal: ${join(fixture.dir, 'night<U+001B>]0;owned<U+0007><U+001B>[31m.jsonl')}`);
    for (const run of [aside, kept]) {
      expect(run.stdout + run.stderr).not.toContain('\u001b');
      expect(run.stdout + run.stderr).not.toContain('\u0007');
    }
  });
});
