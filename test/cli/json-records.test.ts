import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { runCli, startCli, type CliRun } from '../helpers/cli.js';
import { skippingClock, type SkippingClock } from '../helpers/skipping-clock.js';
import { tempDir } from '../helpers/temp.js';

// issue 45: every --json line of every command is one record of one vocabulary, each shape a JSON
// Schema shipped in the package. Two validators we did not write judge the lines: ajv, and Python's
// jsonschema (Debian's python3-jsonschema). The command lines run in-process as main.ts runs them
// (runProgram: what is judged is what they print, not the process), and anything written to this
// process's own stdout meanwhile, past the CLI's streams, is a failure; serve, which a signal ends,
// is spawned.

const SCHEMA_PATH = fileURLToPath(new URL('../../schema/records.schema.json', import.meta.url));
const schema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as object;
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(schema);

interface Printed {
  /** What was run, for the failure message. */
  run: string;
  line: string;
}

const printed: Printed[] = [];
/** What reached the worker's own stdout (or console.log and its kin) while the command lines ran: nothing should. */
const stray: string[] = [];
const services: FakeService[] = [];
let dir = '';
let service: FakeService;

const env = (s: FakeService, key = s.keys.readOnly): NodeJS.ProcessEnv => ({
  RABBIT_API_KEY: key,
  RABBIT_BASE_URL: s.baseUrl,
});

/** Runs the CLI and keeps every line it printed on stdout; a --json run prints nothing else there. */
async function json(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; code?: number; clock?: SkippingClock } = {},
): Promise<CliRun> {
  const { clock } = options;
  const run = await runCli(args, {
    register: 'all',
    env: options.env ?? env(service),
    cwd: dir,
    ...(clock ? { clock } : {}),
  });
  expect(run.code, `${args.join(' ')}\n${run.stderr}`).toBe(options.code ?? 0);
  const lines = run.stdout.split('\n').filter((line) => line !== '');
  expect(lines.length, args.join(' ')).toBeGreaterThan(0);
  for (const line of lines) printed.push({ run: args.join(' '), line });
  return run;
}

beforeAll(async () => {
  dir = await tempDir();
  service = await startFakeService({ seed: 1 });
  services.push(service);
  // What would reach a spawned CLI's stdout past its io: a write to the process's own, or a console
  // method that prints there (vitest's console here does not). Its stderr is not judged, as a spawned
  // run's was not: a warning the shared worker emits there is no record.
  const sinks = [
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => stray.push(String(chunk)) > 0),
    ...(['log', 'info', 'debug', 'dir', 'table'] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void stray.push(args.map(String).join(' '))),
    ),
  ];
  try {
    await commandLines();
  } finally {
    for (const sink of sinks) sink.mockRestore();
  }

  // serve: the ready record, and the counts once stopped.
  const serve = startCli(['serve', '--json'], { cwd: dir });
  await new Promise<void>((resolve) => serve.child.stdout?.once('data', () => resolve()));
  serve.child.kill('SIGTERM');
  const served = await serve.done;
  for (const line of served.stdout.split('\n').filter((l) => l !== '')) printed.push({ run: 'serve --json', line });
}, 180_000);

async function commandLines(): Promise<void> {
  // export: progress (--stats-interval), the summary; a failure; a usage error.
  await json(['export', '--out', 'a.zip', '--json', '--stats-interval', '100ms']);
  await json(['export', '--out', 'nokey.zip', '--json'], { env: { RABBIT_BASE_URL: service.baseUrl }, code: 2 });
  await json(['export', '--out', 'x.zip', '--json', '--bogus'], { code: 2 });
  // An outage: outage records. The service and the run share a skipping clock: its second passes at once.
  const clock = skippingClock();
  const away = await startFakeService({
    seed: 1,
    outage: { atRequest: 30, forMs: 1_000, kind: '429' },
    now: clock.now,
    timer: clock.timer,
  });
  services.push(away);
  await json(['export', '--out', 'away.zip', '--json', '--stats-interval', '100ms'], { env: env(away), clock });

  // The service changes: a drift for verify --against-live, differences for diff, a prototype gone.
  const store = service.store;
  const proto = store.prototype('1001');
  const [first, second] = proto?.pages ?? [];
  const element = first?.elements[0]?.id;
  if (!first || !second || !element) throw new Error('the sample prototype has no two pages with elements');
  store.updateElement('1001', first.id, element, { position: { x: 3, y: 4 } });
  store.renamePage('1001', second.id, 'Renamed page');
  store.deletePrototype('1002');
  await json(['export', '--out', 'b.zip', '--json']);

  await json(['verify', 'a.zip', '--json']);
  await json(['verify', 'missing.zip', '--json'], { code: 1 });
  await json(['verify', 'a.zip', '--against-live', '--json'], { code: 3 });
  await json(['ls', 'a.zip', '--json']);
  await json(['diff', 'a.zip', 'b.zip', '--json']);
  await json(['search', 'a.zip', 'page', '--json']);
  await json(['search', 'a.zip', 'page', '--json', '--kind', 'nonsense'], { code: 2 });
  await json(['restore', 'a.zip', '--prototype', '1001', '--dry-run', '--json'], {
    env: env(service, service.keys.readWrite),
  });
  await json(['convert', 'a.zip', '--to', 'svg', '--out', 'svg', '--json']);
  // The package formats' summary carries what was packaged (and, with --check, what was read back).
  await json(['convert', 'a.zip', '--to', 'wacz', '--out', 'wacz', '--check', '--json']);
  await json(['convert', 'a.zip', '--to', 'bagit', '--out', 'bag', '--json']);
  await json(['backup', '--dir', 'nightly', '--json']);
  await json(['backup', '--dir', 'nightly', '--json', '--dry-run']);
}

afterAll(async () => {
  for (const s of services.splice(0)) await s.close();
});

describe('--json records', () => {
  it('the command lines wrote nothing to stdout past their own', () => {
    expect(stray).toEqual([]);
  });

  it('every line is one JSON object with a type, the schema version and the command', () => {
    for (const { run, line } of printed) {
      const record = JSON.parse(line) as Record<string, unknown>;
      expect(Object.keys(record).slice(0, 3), `${run}: ${line}`).toEqual(['type', 'schemaVersion', 'command']);
      expect(record['schemaVersion']).toBe(1);
    }
  });

  it('ajv finds every line valid against schema/records.schema.json', () => {
    const invalid = printed.flatMap(({ run, line }) =>
      validate(JSON.parse(line))
        ? []
        : [
            `${run}: ${line.slice(0, 300)}\n  ${(validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`).join('\n  ')}`,
          ],
    );
    expect(invalid).toEqual([]);
  });

  it("Python's jsonschema finds every line valid too", () => {
    const script = [
      'import json, sys',
      'from jsonschema import Draft202012Validator',
      'schema = json.load(open(sys.argv[1]))',
      'Draft202012Validator.check_schema(schema)',
      'validator = Draft202012Validator(schema)',
      'bad = 0',
      'for n, line in enumerate(sys.stdin):',
      '    for error in validator.iter_errors(json.loads(line)):',
      '        bad += 1',
      '        print(n, error.message[:300])',
      'print("checked", n + 1)',
      'sys.exit(1 if bad else 0)',
    ].join('\n');
    // Debian's interpreter, which python3-jsonschema installs into.
    const python = spawnSync('/usr/bin/python3', ['-c', script, SCHEMA_PATH], {
      input: printed.map(({ line }) => line).join('\n') + '\n',
      encoding: 'utf8',
    });
    expect(python.stderr).toBe('');
    expect(python.stdout.trim()).toBe(`checked ${printed.length}`);
    expect(python.status).toBe(0);
  });

  it('the runs met every type and every command that prints records, and every run ends with its summary', () => {
    const seen = printed.map(({ line }) => JSON.parse(line) as { type: string; command: string | null });
    expect(new Set(seen.map((r) => r.type))).toEqual(
      new Set(['summary', 'progress', 'outage', 'hit', 'difference', 'row', 'ready']),
    );
    expect(new Set(seen.map((r) => r.command))).toEqual(
      new Set(['export', 'backup', 'verify', 'ls', 'diff', 'search', 'restore', 'convert', 'serve']),
    );
    const byRun = new Map<string, string[]>();
    for (const { run, line } of printed) byRun.set(run, [...(byRun.get(run) ?? []), line]);
    for (const [run, lines] of byRun)
      expect((JSON.parse(lines.at(-1) ?? '{}') as { type?: string }).type, run).toBe('summary');
  });

  it('a change to a record is a change to the schema: an unknown field or a missing one is refused', () => {
    const summary = printed
      .map(({ line }) => JSON.parse(line) as Record<string, unknown>)
      .find((r) => r['type'] === 'summary' && r['command'] === 'ls');
    expect(summary).toBeDefined();
    expect(validate({ ...summary, extra: 1 })).toBe(false);
    const { prototypes: _gone, ...without } = summary ?? {};
    expect(validate(without)).toBe(false);
    expect(validate({ ...summary, schemaVersion: 2 })).toBe(false);
  });

  it('docs/json.md shows a valid example of every type, and of the summary of every command', () => {
    const doc = readFileSync(fileURLToPath(new URL('../../docs/json.md', import.meta.url)), 'utf8');
    const examples = [...doc.matchAll(/^```json\n([\s\S]*?)^```/gm)].map(
      (match) => JSON.parse(match[1] ?? '') as { type: string; command: string | null },
    );
    const invalid = examples.filter((example) => !validate(example)).map((example) => JSON.stringify(example));
    expect(invalid).toEqual([]);
    expect(new Set(examples.map((e) => e.type))).toEqual(
      new Set(['summary', 'progress', 'outage', 'hit', 'difference', 'row', 'ready']),
    );
    expect(new Set(examples.filter((e) => e.type === 'summary').map((e) => e.command))).toEqual(
      new Set(['export', 'backup', 'verify', 'ls', 'diff', 'search', 'restore', 'convert', 'serve']),
    );
  });

  it('ls prints a row per prototype, then the count', () => {
    const lines = printed
      .filter(({ run }) => run === 'ls a.zip --json')
      .map(({ line }) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((r) => r['type'] === 'row').map((r) => r['id'])).toEqual(['3', '17', '42', '1001', '1002']);
    expect(lines.at(-1)).toMatchObject({ type: 'summary', ok: true, exitCode: 0, prototypes: 5 });
  });
});
