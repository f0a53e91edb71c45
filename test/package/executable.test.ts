import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConvertReport } from '../../src/convert/report.js';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { expectedFrom } from '../convert/expected.js';
import { withoutNonXml } from '../convert/helpers.js';
import { requireTool, runTool, tool } from '../convert/tools.js';
import { builtExecutable } from './built-executable.js';

const execFileAsync = promisify(execFile);
const PDFFONTS = requireTool('/usr/bin/pdffonts', 'poppler-utils');
const PDFTOTEXT = requireTool('/usr/bin/pdftotext', 'poppler-utils');
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The single-file executable of `npm run package` (issue 37), built once here (or kept from an
 * earlier run that built it from the same inputs: test/package/built-executable.ts), then run from
 * a folder of its own with no Node on PATH and no node_modules anywhere above it: PATH is an empty
 * folder, since /usr/bin holds this machine's node and the executable needs no other program.
 */
describe('the single-file executable (npm run package)', () => {
  let build: string;
  let home: string;
  let work: string;
  let emptyPath: string;
  let exe: string;
  let service: FakeService;

  beforeAll(async () => {
    build = await builtExecutable(ROOT);
    const [built] = (await readdir(build)).filter((file) => !file.endsWith('.sha256'));
    home = await mkdtemp(join(tmpdir(), 'rabbit-sea-home-'));
    work = join(home, 'work');
    emptyPath = join(home, 'bin');
    await Promise.all([mkdir(work), mkdir(emptyPath)]);
    exe = join(work, 'rabbit-export');
    await copyFile(join(build, built as string), exe);
    service = await startFakeService();
  }, 180_000);

  afterAll(async () => {
    await service?.close();
    // Not the build: it is kept for the next run (test/package/built-executable.ts).
    if (home) await rm(home, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ PATH: emptyPath, HOME: home, ...extra });

  function run(args: string[], extra: Record<string, string> = {}): Promise<Run> {
    return new Promise((resolve, reject) => {
      execFile(exe, args, { cwd: work, env: env(extra) }, (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        resolve({ code: error ? (error.code as unknown as number) : 0, stdout, stderr });
      });
    });
  }

  it('is written with a sha256sum line beside it', async () => {
    const [name] = (await readdir(build)).filter((file) => !file.endsWith('.sha256'));
    expect(name).toMatch(/^rabbit-export-linux-(x64|arm64)$/);
    const line = await readFile(join(build, `${name}.sha256`), 'utf8');
    const check = await execFileAsync('sha256sum', ['--check', '--strict', `${name}.sha256`], { cwd: build });
    expect(line).toMatch(new RegExp(`^[0-9a-f]{64}  ${name}\\n$`));
    expect(check.stdout).toBe(`${name}: OK\n`);
  });

  it('runs with no node on PATH and nothing beside it', async () => {
    expect(await readdir(emptyPath)).toEqual([]);
    expect(await readdir(work)).toEqual(['rabbit-export']);
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const version = await run(['--version']);
    expect(version).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    const completion = await run(['completion', 'bash']);
    expect(completion.code).toBe(0);
    expect(completion.stdout).toContain('\ncomplete -F _rabbit_export rabbit-export\n');
  });

  /**
   * The executable's export of the sample account, run once for the file: the PDF tests below read
   * the archive it wrote, and the first of them judges the run itself.
   */
  let exported: Promise<Run> | undefined;
  const exportOnce = (): Promise<Run> =>
    (exported ??= run(['export', '--out', 'team.zip', '--json', '--quiet'], {
      RABBIT_BASE_URL: service.baseUrl,
      RABBIT_API_KEY: service.keys.readOnly,
    }));

  it('runs the demo, and exports, verifies, converts to PDF and serves an archive', async () => {
    const demo = await run(['demo', '--out', 'demo.zip']);
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain(`archive: ${join(work, 'demo.zip')}`);
    // No "single executable applications are experimental" warning: the build turns it off.
    expect(demo.stderr).not.toContain('Warning');

    const exported = await exportOnce();
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ type: 'summary', ok: true, complete: true });

    const verified = await run(['verify', 'team.zip', '--json']);
    expect(verified.code).toBe(0);

    const converted = await run(['convert', 'team.zip', '--to', 'pdf', '--out', 'pdf']);
    expect(converted.code).toBe(0);
    const pdfs = (await readdir(join(work, 'pdf'))).filter((file) => file.endsWith('.pdf'));
    expect(pdfs.length).toBeGreaterThan(0);
    for (const pdf of pdfs) expect((await readFile(join(work, 'pdf', pdf))).subarray(0, 5).toString()).toBe('%PDF-');

    const view = spawn(exe, ['view', 'team.zip', '--port', '0'], { cwd: work, env: env() });
    try {
      let printed = '';
      view.stdout.setEncoding('utf8');
      const url = await new Promise<string>((resolve, reject) => {
        view.stdout.on('data', (chunk: string) => {
          printed += chunk;
          const found = /http:\/\/127\.0\.0\.1:\d+\/\S*/.exec(printed);
          if (found) resolve(found[0]);
        });
        view.once('exit', (code) => reject(new Error(`view exited (${code}) before its URL: ${printed}`)));
      });
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<html');
    } finally {
      view.kill('SIGTERM');
      if (view.exitCode === null && view.signalCode === null) await once(view, 'exit');
    }
  });

  it('writes PDF binders with no font on the machine, in the DejaVu Sans it carries', async () => {
    // fontconfig reads FONTCONFIG_FILE: this one names no font folder, so it offers no font at all.
    const conf = join(home, 'no-fonts.conf');
    await writeFile(
      conf,
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n` +
        `<fontconfig><cachedir>${join(home, 'fc-cache')}</cachedir></fontconfig>\n`,
    );
    const offered = await runTool('/usr/bin/env', [`FONTCONFIG_FILE=${conf}`, 'fc-match', '-s', 'sans-serif']);
    expect(offered.stdout).toBe('');
    expect((await exportOnce()).code).toBe(0);

    const converted = await run(['convert', 'team.zip', '--to', 'pdf', '--out', 'no-fonts'], {
      FONTCONFIG_FILE: conf,
    });
    expect(converted.stderr).toBe('');
    expect(converted.code).toBe(0);
    const report = JSON.parse(await readFile(join(work, 'no-fonts', 'convert-report.json'), 'utf8')) as ConvertReport;
    const expected = await expectedFrom(join(work, 'team.zip'));
    expect(report.prototypes.map((p) => p.id).sort()).toEqual(expected.map((p) => p.id).sort());
    for (const proto of expected) {
      const file = join(work, 'no-fonts', report.prototypes.find((p) => p.id === proto.id)?.file as string);
      const fonts = (await tool(PDFFONTS, [file])).split('\n').slice(2).filter(Boolean);
      expect(new Set(fonts.map((line) => line.split(/\s+/)[0]?.replace(/^[A-Z]{6}\+/, '')))).toEqual(
        new Set(['DejaVuSans-Bold', 'DejaVuSans']),
      );
      // Every label reads back, whatever was drawn: pdftotext, not our code, is the judge.
      const text = await tool(PDFTOTEXT, ['-enc', 'UTF-8', file, '-']);
      const labels = proto.pages
        .flatMap((page) => [...page.layers.flatMap((l) => l.elements), ...page.elements])
        .map((e) => e.json.text)
        .filter((label): label is string => typeof label === 'string')
        .flatMap((label) => withoutNonXml(label).split(/\r\n|\r|\n/))
        .map((line) => line.trim())
        .filter((line) => line !== '');
      expect(labels.length).toBeGreaterThan(0);
      for (const line of labels) expect(text, `${proto.id}: ${line}`).toContain(line);
    }
  });
});
