import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFormats } from '../../src/cli/export-flags.js';
import { exportAccount } from '../../src/export/export-account.js';
import { verifyArchive } from '../../src/verify/verify-archive.js';
import { readArchive } from '../helpers/archive.js';
import { useFakeService } from '../helpers/fake-service.js';
import { assertValidManifest } from '../helpers/manifest-schema.js';
import type { FakeService } from '../../src/fake-service/index.js';

/** The older page views (`.xhtml?mode=sketched|plain`): kept on request, "not offered" when the service has none. */
const VIEW_ENTRY = /^prototypes\/\d+\/r\d+\/pages\/(page\d+)\.(sketched|plain)\.xhtml$/;

describe('export --formats xhtml-sketched,xhtml-plain', () => {
  describe('when the service offers the views', () => {
    let service: FakeService;
    let dir: string;
    useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

    it('keeps both views of every page under their own names, and nothing else changes', async () => {
      const out = join(dir, 'views.zip');
      const result = await exportAccount({
        out,
        baseUrl: service.baseUrl,
        keys: [service.keys.readOnly],
        formats: parseFormats('json,png,xhtml-sketched,xhtml-plain'),
      });
      expect(result.complete).toBe(true);
      const { manifest, entries } = await readArchive(out);
      assertValidManifest(manifest);
      expect(manifest.notOffered).toBeUndefined();
      const pages = [...entries.keys()].filter((name) => /^prototypes\/\d+\/r\d+\/pages\/page\d+\.json$/.test(name));
      const views = [...entries.keys()].filter((name) => VIEW_ENTRY.test(name));
      expect(views.length).toBe(2 * pages.length);
      // html was not asked for: the result view is not there, the older views are.
      expect([...entries.keys()].some((name) => name.endsWith('.html') && name.includes('/pages/'))).toBe(false);
      const files = Object.values(manifest.prototypes).flatMap((p) =>
        Object.values(p.revisions).flatMap((r) => r.files),
      );
      for (const name of views) {
        const [, , mode] = VIEW_ENTRY.exec(name) as RegExpExecArray;
        const text = entries.get(name)?.data.toString('utf8') ?? '';
        expect(text).toContain(`<body class="mode-${mode}">`);
        const file = files.find((f) => f.path === name);
        expect(file?.source).toMatch(new RegExp(`^/rabbit/api/prototypes/\\d+/pages/page\\d+\\.xhtml\\?mode=${mode}$`));
        expect(file?.source).not.toContain('api_key');
      }
      expect((await verifyArchive(out)).ok).toBe(true);
    });
  });

  describe('when the service does not offer them (404)', () => {
    let service: FakeService;
    let dir: string;
    useFakeService({ seed: 1, dataset: { pageViews: false } }, (fixture) => ({ service, dir } = fixture));

    it('records them as not offered: no error, the archive complete', async () => {
      const out = join(dir, 'none.zip');
      const result = await exportAccount({
        out,
        baseUrl: service.baseUrl,
        keys: [service.keys.readOnly],
        formats: parseFormats('json,html,xhtml-sketched'),
      });
      expect(result.complete).toBe(true);
      const { manifest, entries } = await readArchive(out);
      assertValidManifest(manifest);
      expect(manifest.complete).toBe(true);
      expect(manifest.errors).toEqual([]);
      expect(Object.values(manifest.prototypes).every((p) => p.complete)).toBe(true);
      const pages = [...entries.keys()].filter((name) => /^prototypes\/\d+\/r\d+\/pages\/page\d+\.json$/.test(name));
      expect(manifest.notOffered).toEqual([
        expect.objectContaining({ kind: 'xhtml-sketched', status: 404, count: pages.length }),
      ]);
      expect(manifest.notOffered?.[0]?.examples.every((s) => /\.xhtml\?mode=sketched$/.test(s))).toBe(true);
      expect(result.notOffered).toEqual(manifest.notOffered);
      expect([...entries.keys()].some((name) => VIEW_ENTRY.test(name))).toBe(false);
      expect((await verifyArchive(out)).ok).toBe(true);
    });
  });

  it('--formats names them, and refuses unknown names', () => {
    expect([...parseFormats('json,xhtml-plain')]).toEqual(['json', 'xhtml-plain']);
    expect(() => parseFormats('json,xhtml')).toThrow(/xhtml-sketched and xhtml-plain/);
  });
});
