import { createHash } from 'node:crypto';
import { chmod, chown, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerExport } from '../../src/cli/commands/export.js';
import { sendArchive } from '../../src/cli/stdout-archive.js';
import { exportStaged } from '../../src/export/staged-export.js';
import type { FakeService } from '../../src/fake-service/index.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';

const NOBODY = 65534;
let service: FakeService;
let dir: string;
useFakeService({ seed: 3 }, (fixture) => ({ service, dir } = fixture));

beforeAll(() => {
  if (process.getuid?.() !== 0)
    throw new Error('these tests plant files owned by another user (chown to nobody): run them as root, as CI does');
});

const env = (): NodeJS.ProcessEnv => ({ RABBIT_API_KEY: service.keys.readOnly, RABBIT_BASE_URL: service.baseUrl });

describe('export --out - through a work folder on a shared machine', () => {
  it.each([
    ['owned by another user', NOBODY, 0o755],
    ['writable by others', 0, 0o777],
  ])('refuses a work folder %s and sends nothing', async (_, owner, mode) => {
    await chmod(dir, 0o755);
    const work = join(dir, 'stage');
    await mkdir(work);
    await chmod(work, mode);
    await chown(work, owner, owner);
    const run = await runCli(['export', '--out', '-', '--work-dir', work, '--json'], {
      register: registerExport,
      env: env(),
    });
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('PK');
    expect(run.stderr).toContain('UNSAFE_PATH');
  });

  it('sends the archive it verified even when its name is swapped for a link after verify', async () => {
    const victim = join(dir, 'secret.txt');
    await writeFile(victim, 'root only\n');
    const staged = await exportStaged({
      baseUrl: service.baseUrl,
      keys: [service.keys.readOnly],
      workDir: join(dir, 'stage'),
    });
    try {
      const verified = await readFile(staged.path);
      await rm(staged.path);
      await symlink(victim, staged.path);
      const sink = new PassThrough();
      const received: Buffer[] = [];
      sink.on('data', (chunk: Buffer) => received.push(chunk));
      const sent = await sendArchive(staged.handle, sink as unknown as NodeJS.WriteStream);
      expect(Buffer.concat(received).equals(verified)).toBe(true);
      expect(sent.sha256).toBe(createHash('sha256').update(verified).digest('hex'));
    } finally {
      await staged.handle.close();
    }
  });
});
