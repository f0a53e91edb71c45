import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import type * as SessionModule from '../../src/client/service-session.js';
import type * as HttpClientModule from '../../src/client/http-client.js';
import type { ServiceSession } from '../../src/client/service-session.js';
import { exportAccount } from '../../src/export/export-account.js';
import { checkAgainstLive } from '../../src/live-check/check-live.js';
import { restorePrototype } from '../../src/restore/restore-prototype.js';
import { useFakeService } from '../helpers/fake-service.js';
import { PROTO, damage, restoreOptions } from '../restore/restore-helpers.js';

// issue 44, item 2: the three commands that talk to the service reach it through one session
// each (client/service-session.ts), built and closed there, and make no client of their own.

const seen = vi.hoisted(() => ({ sessions: [] as ServiceSession[], clients: 0 }));

vi.mock('../../src/client/service-session.js', async (importOriginal) => {
  const real = await importOriginal<typeof SessionModule>();
  return {
    ...real,
    openServiceSession: (...args: Parameters<typeof real.openServiceSession>): ServiceSession => {
      const session = real.openServiceSession(...args);
      seen.sessions.push(session);
      return session;
    },
  };
});

vi.mock('../../src/client/http-client.js', async (importOriginal) => {
  const real = await importOriginal<typeof HttpClientModule>();
  class CountedClient extends real.HttpClient {
    constructor(options: ConstructorParameters<typeof real.HttpClient>[0]) {
      super(options);
      seen.clients++;
    }
  }
  return { ...real, HttpClient: CountedClient };
});

let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

/** Runs one command and returns the sessions it opened and the clients made meanwhile. */
async function during(command: () => Promise<unknown>): Promise<{ sessions: ServiceSession[]; clients: number }> {
  const before = { sessions: seen.sessions.length, clients: seen.clients };
  await command();
  return { sessions: seen.sessions.slice(before.sessions), clients: seen.clients - before.clients };
}

describe('export, live check and restore each open one service session, and close it', () => {
  it('each command: one session, no client made outside it, closed when the command ends', async () => {
    const archive = join(dir, 'all.zip');
    const keys = [service.keys.readWrite];
    const runs = {
      export: await during(() =>
        exportAccount({ out: archive, baseUrl: service.baseUrl, keys, prototypes: new Set([PROTO]) }),
      ),
      'live check': await during(() => checkAgainstLive({ archive, baseUrl: service.baseUrl, keys })),
      restore: await during(() => {
        damage(service);
        return restorePrototype(restoreOptions(service, archive, { journal: join(dir, 'restore.jsonl') }));
      }),
    };
    for (const [command, { sessions, clients }] of Object.entries(runs)) {
      expect(sessions, command).toHaveLength(1);
      expect(clients, command).toBe(1);
      expect(sessions[0]?.context.signal.aborted, `${command} closed its session`).toBe(true);
    }
  });
});
