import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { registerRestore } from '../../src/cli/commands/restore.js';
import { runCli } from '../helpers/cli.js';
import { useFakeService } from '../helpers/fake-service.js';
import { PROTO, exportPrototype } from '../restore/restore-helpers.js';

/**
 * A service that puts the key it was sent into what it answers: an attribute's name, an element
 * id in a list. Restore tells what it found live (attributes the archive lacks, ids it cannot
 * use); the key never goes with it, in the plan, the writes' lines, the outcome or --json.
 */
let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

async function restoreRuns(archive: string): Promise<string[]> {
  const outputs: string[] = [];
  for (const extra of [['--dry-run'], ['--dry-run', '--json'], ['--json']]) {
    const run = await runCli(['restore', archive, '--prototype', PROTO, ...extra], {
      register: registerRestore,
      env: { RABBIT_API_KEY: service.keys.readWrite, RABBIT_BASE_URL: service.baseUrl },
    });
    outputs.push(run.stdout + run.stderr);
  }
  return outputs;
}

describe('restore against a service that echoes the key', () => {
  it('an attribute named by the key is told as one the archive lacks, its name hidden', async () => {
    const archive = await exportPrototype(service, dir, 'night.zip');
    const key = service.keys.readWrite;
    const element = service.store.page(PROTO, 'page0001')!.elements[0]!;
    service.store.updateElement(PROTO, 'page0001', element.id, { [key]: 1, [`x-${key}`]: 2 } as never);
    const outputs = await restoreRuns(archive);
    for (const output of outputs) {
      expect(output).toContain('has attributes the archive lacks');
      expect(output).toContain('REDACTED');
      expect(output).not.toContain(key);
    }
  });

  it('a list naming the key as an element id skips that page and says so, the key hidden', async () => {
    const archive = await exportPrototype(service, dir, 'night.zip');
    const key = service.keys.readWrite;
    // The element keeps the object the store lists, so its id can be made what no service would give.
    const element = service.store.addElement(PROTO, 'page0002', { type: 'sticker' });
    element.id = key;
    const outputs = await restoreRuns(archive);
    for (const output of outputs) {
      expect(output).toContain('element ids of an unknown shape');
      expect(output).not.toContain(key);
    }
  });
});
