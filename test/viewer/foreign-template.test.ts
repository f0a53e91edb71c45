import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeService, type FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { readArchive } from '../helpers/archive.js';
import { closeAll, startHostileFront, type Listening } from './hostile-front.js';

/**
 * A `<template>` inside `<svg>` or `<math>` is a foreign element of that name, with no content
 * fragment apart from its children (only an HTML template has one). Found by the view property
 * test: a page holding one must not keep the export from completing, nor leave its view out.
 */

let service: FakeService;
let front: Listening | undefined;
let dir: string;

beforeAll(async () => {
  front = await startHostileFront({
    upstream: () => service.baseUrl,
    pageFor: () =>
      '<html><head><title>foreign template</title></head><body><svg><template><rect/></template></svg><math><template></template></math></body></html>',
  });
  service = await startFakeService({ seed: 1, advertisedBaseUrl: front.origin });
  dir = await mkdtemp(join(tmpdir(), 'rabbit-foreign-template-'));
});

afterAll(async () => {
  await closeAll(front, service);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a page with an SVG or MathML <template>', () => {
  it('is exported with its view, and the export completes', async () => {
    const out = join(dir, 'out.zip');
    const result = await exportAccount({ out, baseUrl: front?.origin as string, keys: [service.keys.readOnly] });
    expect(result.complete).toBe(true);
    const { manifest, entries } = await readArchive(out);
    expect(manifest.errors).toEqual([]);
    const views = [...entries.keys()].filter((path) => path.endsWith('.view.html'));
    expect(views.length).toBeGreaterThan(0);
    for (const view of views) expect(entries.get(view)?.data.toString('utf8')).toContain('<svg>');
  });
});
