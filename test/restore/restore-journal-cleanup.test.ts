import { copyFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { runCli } from '../helpers/cli.js';
import { PROTO, damagedArchiveFixture } from './restore-helpers.js';

const fixture = damagedArchiveFixture();

const journals = async (): Promise<string[]> =>
  (await readdir(dirname(fixture.archive))).filter((name) => name.includes('.restore-'));

describe('restore leaves nothing behind when it is done, and offers only a rerun that can help', () => {
  it('removes its journal beside the archive after a successful run', async () => {
    const run = await fixture.restore();
    expect(run.code).toBe(0);
    expect(await journals()).toEqual([]);
    expect(run.stdout).not.toContain('journal:');
  });

  it("removes a journal it finds when nothing is left to write, and leaves another service's alone", async () => {
    // A journal of a real restore, kept by naming it, then put where the default one lives, with
    // a write begun and never answered: what an interrupted run leaves.
    const kept = join(fixture.dir, 'kept.jsonl');
    expect((await fixture.restore(['--journal', kept])).code).toBe(0);
    const beside = join(dirname(fixture.archive), `.a.zip.restore-${PROTO}.jsonl`);
    await copyFile(kept, beside);
    await writeFile(beside, '{"t":"begin","op":"update","parent":"page0001","archived":"1"}\n', { flag: 'a' });

    const run = await fixture.restore();
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('0 to create, 0 to update, 0 to delete');
    expect(run.stdout).toContain('an earlier run stopped with 1 write unanswered');
    expect(await journals()).toEqual([]);

    // Another service's journal is not this restore's to remove, when nothing is written.
    await writeFile(beside, '{"t":"start","baseUrl":"https://elsewhere.example","prototype":"9","at":"x"}\n');
    expect((await fixture.restore()).code).toBe(0);
    expect(await journals()).toEqual([`.a.zip.restore-${PROTO}.jsonl`]);
  });

  it('keeps a journal named with --journal after a run that wrote everything, and claims no refusal', async () => {
    const kept = join(fixture.dir, 'kept.jsonl');
    const run = await fixture.restore(['--journal', kept]);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('not restored');
    expect(run.stdout).toContain(`journal: ${kept} (kept as the record of what was written, as --journal asks)`);
    expect(run.stdout).not.toMatch(/refused|rerun/);
  });

  it('after a read-only key is refused, says that a read-write key is needed to resume, not a plain rerun', async () => {
    const run = await runCli(['restore', fixture.archive, '--prototype', PROTO], {
      register: registerRestore,
      env: { RABBIT_API_KEY: fixture.service.keys.readOnly, RABBIT_BASE_URL: fixture.service.baseUrl },
    });
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('running the same command again');
    expect(run.stdout).toContain('with a read-write key, running the command again resumes');
    expect(run.stderr).toMatch(/read-only/);
  });
});
