import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerLinks } from '../../src/cli/commands/links.js';
import { registerVerify } from '../../src/cli/commands/verify.js';
import type { LinkFormat } from '../../src/links/link-formats.js';
import { LINK_FORMATS } from '../../src/links/link-formats.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { runCli } from '../helpers/cli.js';
import { sampleManifest, writeSampleArchive } from '../verify/sample-archive.js';

/**
 * A source whose percent-escapes decode to a line separator or control character: nginx and
 * Apache match the decoded path, so no rule can hold it. The one shape check of the manifest
 * refuses it, naming its place, so verify and every output of links say the same thing.
 */
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'links-decoded-control-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const PLACE = 'prototypes.4711.revisions.17.files[2].source';
const archiveWithSource = (source: string): Promise<string> => {
  const manifest = sampleManifest();
  manifest.prototypes['4711']!.revisions['17']!.files[2]!.source = source;
  return writeSampleArchive(dir, { manifest });
};

describe('a source that decodes to a control character', () => {
  it.each([
    ['U+2028', '/rabbit/api/prototypes/4711/pages/page%E2%80%A80001.json'],
    ['U+000A', '/rabbit/api/prototypes/4711/pages/page%0A0001.json'],
    ['U+001B', '/rabbit/api/prototypes/4711/pages/page%1b0001.json'],
  ])('%s: verify and links both refuse it and name it', async (control, source) => {
    const archive = await archiveWithSource(source);
    const report = await verifyArchive(archive);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      expect.objectContaining({ kind: 'manifest-invalid', detail: expect.stringContaining(PLACE) as unknown }),
    ]);
    expect(report.problems[0]?.detail).toContain(control);
    const verify = await runCli(['verify', archive], { register: registerVerify });
    expect(verify.code).toBe(1);
    for (const format of LINK_FORMATS) {
      const links = await runCli(['links', archive, '--format', format], { register: registerLinks });
      expect({ format, code: links.code }).toEqual({ format, code: 1 });
      expect(links.stderr).toContain(`${PLACE} holds a percent-escaped control character (${control})`);
    }
  });

  it('text past ASCII, percent-encoded, is a source both accept', async () => {
    const archive = await archiveWithSource('/rabbit/api/prototypes/4711/pages/caf%C3%A90001.json');
    expect((await verifyArchive(archive)).ok).toBe(true);
    for (const format of ['nginx', 'apache'] satisfies LinkFormat[]) {
      const links = await runCli(['links', archive, '--format', format], { register: registerLinks });
      expect({ format, code: links.code, stderr: links.stderr }).toEqual({ format, code: 0, stderr: '' });
    }
  });
});
