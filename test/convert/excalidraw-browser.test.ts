import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { excalidrawRestoreScript, launchChromium, type BrowserContext, type Page } from '../browser/index.js';
import { convertArchive } from '../../src/convert/convert-archive.js';
import type { ConvertReport } from '../../src/convert/report.js';
import { expectedFrom, type ExpectedPrototype } from './expected.js';
import { exportSample } from './helpers.js';
import { requireTool } from './tools.js';
import { CHROMIUM, TOOL_PACKAGES } from '../helpers/tools.js';

/** Every scene read back by Excalidraw's own restoreElements, in Chromium, offline. */
requireTool(CHROMIUM, TOOL_PACKAGES[CHROMIUM]);

interface SceneElement {
  id: string;
  type: string;
  text?: string;
  originalText?: string;
  containerId?: string | null;
  link: string | null;
  locked: boolean;
  isDeleted: boolean;
  fileId?: string;
  customData?: { rabbitId?: string; rabbitJson?: string; rabbitDiscussionId?: string };
}
interface Scene {
  type: string;
  version: number;
  source: string;
  elements: SceneElement[];
  appState: Record<string, unknown>;
  files: Record<string, { mimeType: string; id: string; dataURL: string; created: number }>;
}

let dir: string;
let out: string;
let report: ConvertReport;
let expected: ExpectedPrototype[];
let browser: BrowserContext;
let page: Page;

const fileOf = (index: number, pageId: string): string => `${String(index + 1).padStart(2, '0')}-${pageId}.excalidraw`;

describe('convert --to excalidraw, read back by Excalidraw in Chromium', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-excalidraw-'));
    const archive = await exportSample(dir);
    expected = await expectedFrom(archive);
    out = join(dir, 'excalidraw');
    report = await convertArchive({ archive, out, to: 'excalidraw' });
    browser = await launchChromium(CHROMIUM);
    page = await browser.newPage();
    await page.route('**/*', (route) => route.abort());
    await page.addScriptTag({ content: await excalidrawRestoreScript() });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('writes a folder per prototype with one scene per page, and reports it', async () => {
    expect(report.to).toBe('excalidraw');
    expect(report.complete).toBe(true);
    for (const proto of expected) {
      const result = report.prototypes.find((p) => p.id === proto.id)!;
      expect((await readdir(join(out, result.file!))).sort()).toEqual(proto.pages.map((p, i) => fileOf(i, p.id)));
    }
  });

  it('every element survives restoreElements: count, ids, text, links and customData', async () => {
    let checked = 0;
    for (const proto of expected) {
      const folder = join(out, report.prototypes.find((p) => p.id === proto.id)!.file!);
      for (const [index, wireframe] of proto.pages.entries()) {
        const scene = JSON.parse(await readFile(join(folder, fileOf(index, wireframe.id)), 'utf8')) as Scene;
        expect([scene.type, scene.version]).toEqual(['excalidraw', 2]);
        const restored = await page.evaluate(
          (elements) =>
            (
              globalThis as unknown as {
                excalidrawRestore: { restoreElements: (e: unknown, l: null, o: object) => unknown };
              }
            ).excalidrawRestore.restoreElements(elements, null, { repairBindings: true }),
          scene.elements,
        );
        const after = restored as SceneElement[];
        expect(after.map((e) => e.id)).toEqual(scene.elements.map((e) => e.id));
        expect(after.filter((e) => e.isDeleted)).toEqual([]);
        for (const [i, before] of scene.elements.entries()) {
          const element = after[i]!;
          expect(element.type).toBe(before.type);
          expect(element.text).toBe(before.text);
          expect(element.originalText).toBe(before.originalText);
          expect(element.containerId ?? null).toBe(before.containerId ?? null);
          expect(element.link).toBe(before.link);
          expect(element.customData).toEqual(before.customData);
        }
        // The rendering: a locked image whose file is in the scene.
        const image = after.find((e) => e.type === 'image')!;
        expect(image.locked).toBe(true);
        expect(scene.files[image.fileId!]?.dataURL).toBe(`data:image/png;base64,${wireframe.png.toString('base64')}`);
        // Each archived element once, its JSON exact, its label and its link to the target's file.
        const all = [...wireframe.layers.flatMap((l) => l.elements), ...wireframe.elements];
        const shapes = after.filter((e) => e.customData?.rabbitId !== undefined);
        expect(shapes.map((e) => e.customData?.rabbitJson)).toEqual(all.map((e) => e.raw));
        for (const [k, element] of all.entries()) {
          const shape = shapes[k]!;
          const text = element.json.text;
          const label = after.find((e) => e.type === 'text' && e.containerId === shape.id);
          expect(label?.text).toBe(typeof text === 'string' && text !== '' ? text : undefined);
          const target = proto.pages.findIndex((p) => p.id === element.json.target);
          expect(shape.link).toBe(target >= 0 ? fileOf(target, proto.pages[target]!.id) : null);
          checked++;
        }
        const notes = after.filter((e) => e.customData?.rabbitDiscussionId !== undefined);
        expect(notes.map((e) => e.customData?.rabbitDiscussionId)).toEqual(
          wireframe.discussions.map((d) => String(d.id)),
        );
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});
