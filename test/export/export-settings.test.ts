import { describe, expect, it } from 'vitest';
import { DEFAULT_SIZE_CAPS } from '../../src/crawl/crawl-account.js';
import { Deadline, type DeadlineTimer } from '../../src/export/deadline.js';
import { EXPORT_DEFAULTS } from '../../src/export/export-defaults.js';
import { resolveExportSettings } from '../../src/export/export-settings.js';
import { RabbitError } from '../../src/core/errors.js';

// issue 35, item 4: an export's options were completed in four files and read all along the run.
// They are now resolved once into frozen sections, each part of the run given its own.

const BASE = { out: '/tmp/never-written.zip', baseUrl: 'http://127.0.0.1:9', keys: ['k'.repeat(40)] };

describe('resolveExportSettings', () => {
  it('fills in every default in one place', () => {
    const settings = resolveExportSettings(BASE);
    expect(settings.http).toMatchObject({
      concurrency: EXPORT_DEFAULTS.concurrency,
      timeoutMs: EXPORT_DEFAULTS.timeoutMs,
      transport: { allowInsecureHttp: false },
    });
    expect(settings.crawl.caps).toEqual(DEFAULT_SIZE_CAPS);
    expect([...settings.crawl.formats].sort()).toEqual(['html', 'json', 'png']);
    expect(settings.crawl.firstContactMs).toBe(EXPORT_DEFAULTS.firstContactMs);
    expect(settings.archive).toMatchObject({ force: false, pages: true });
    expect(settings.run.now).toBe(Date.now);
  });

  it('gives each section only its own settings, an option left out absent rather than undefined', () => {
    const settings = resolveExportSettings({ ...BASE, caps: { png: 5 }, prototypes: new Set(['7']), force: true });
    expect(Object.keys(settings).sort()).toEqual(['archive', 'crawl', 'http', 'run']);
    expect(Object.keys(settings.http).sort()).toEqual(['baseUrl', 'concurrency', 'keys', 'timeoutMs', 'transport']);
    expect(Object.keys(settings.crawl).sort()).toEqual(['caps', 'firstContactMs', 'formats', 'keys', 'only']);
    expect(Object.keys(settings.archive).sort()).toEqual(['baseUrl', 'force', 'keys', 'out', 'pages']);
    expect(Object.keys(settings.run).sort()).toEqual(['emit', 'now']);
    expect(settings.crawl.caps).toEqual({ ...DEFAULT_SIZE_CAPS, png: 5 });
    expect([...(settings.crawl.only ?? [])]).toEqual(['7']);
  });

  it('is frozen, sections and caps included: no part of the run changes what another reads', () => {
    const settings = resolveExportSettings({ ...BASE, retry: { attempts: 2 } });
    for (const part of [settings, settings.http, settings.crawl, settings.archive, settings.run, settings.crawl.caps])
      expect(Object.isFrozen(part)).toBe(true);
    expect(Object.isFrozen(settings.http.keys)).toBe(true);
    expect(settings.http.retry).toEqual({ attempts: 2 });
  });

  it('json alone keeps no page renderings, so the viewer fetches no assets', () => {
    expect(resolveExportSettings({ ...BASE, formats: new Set(['json']) }).archive.pages).toBe(false);
  });

  it.each([
    ['no key', { keys: [] }, 'NO_API_KEY'],
    ['a concurrency out of range', { concurrency: 0 }, 'USAGE'],
    ['a concurrency that is not whole', { concurrency: 1.5 }, 'USAGE'],
  ])('refuses %s before anything touches the disk or the network', (_, change, code) => {
    let thrown: unknown;
    try {
      resolveExportSettings({ ...BASE, ...change });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RabbitError);
    expect((thrown as RabbitError).code).toBe(code);
  });
});

describe('Deadline', () => {
  it('takes named options and tells onExpire what was left undone', () => {
    let expire: (() => void) | undefined;
    const timer: DeadlineTimer = (_ms, fire) => {
      expire = fire;
      return () => undefined;
    };
    const undone: RabbitError[] = [];
    const deadline = new Deadline({ maxDurationMs: 60_000, timer, onExpire: (error) => undone.push(error) });
    expect(deadline.expired).toBe(false);
    expire?.();
    expect(deadline.reached).toBe(true);
    expect(undone.map((error) => [error.code, error.errorClass])).toEqual([['DEADLINE', 'resource']]);
  });

  it('when stoppable, stops on another reason without a --max-duration', () => {
    const undone: string[] = [];
    const deadline = new Deadline({ stoppable: true, onExpire: (error) => undone.push(error.code) });
    const run = new AbortController();
    const signal = deadline.requestSignal(run.signal);
    expect(signal).not.toBe(run.signal);
    deadline.stopNow(new RabbitError('SERVICE_DOWN', 'gone', { errorClass: 'resource' }));
    expect(signal.aborted).toBe(true);
    expect(deadline.reached).toBe(false);
    expect(undone).toEqual(['SERVICE_DOWN']);
  });
});
