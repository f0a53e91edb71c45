import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../../src/fake-service/index.js';
import { exportAccount } from '../../src/export/export-account.js';
import { useFakeService } from '../helpers/fake-service.js';
import { requireTool } from '../helpers/tools.js';

const run = promisify(execFile);
const DOC = fileURLToPath(new URL('../../docs/viewing.md', import.meta.url));

let service: FakeService;
let dir: string;
useFakeService({ seed: 1 }, (fixture) => ({ service, dir } = fixture));

/** What each thing the doc may say a page shows looks like in that page's HTML. */
const SHOWN: Array<[RegExp, string]> = [
  [/milestones/i, '<h3>Milestones</h3>'],
  [/layers/i, '<h3>Layers</h3>'],
  [/discussions?\b/i, '<h3>Discussions</h3>'],
  [/thumbnails?/i, '<img src='],
];

describe('docs/viewing.md says what the pages show', () => {
  it('names for index.html and for the overview pages only what each holds', async () => {
    requireTool('unzip');
    const out = join(dir, 'team.zip');
    await exportAccount({ out, baseUrl: service.baseUrl, keys: [service.keys.readOnly], concurrency: 4 });
    // Read by unzip, not by our own zip reader.
    const entry = async (name: string): Promise<string> =>
      (await run('unzip', ['-p', out, name], { maxBuffer: 16 * 1024 * 1024 })).stdout;
    const index = await entry('index.html');
    const overview = await entry('overview/prototype-3.html');

    const doc = await readFile(DOC, 'utf8');
    const seen = doc.slice(doc.indexOf('## What you see'), doc.indexOf('\n## ', doc.indexOf('## What you see') + 1));
    // The section's first paragraph is about index.html; the rest, about the overview pages.
    const paragraphs = seen.split('\n\n');
    const aboutIndex = paragraphs[1] ?? '';
    const aboutOverview = paragraphs.slice(2).join('\n\n');
    expect(aboutIndex).toMatch(/^`index\.html`/);
    const saidButAbsent = (about: string, html: string): string[] =>
      SHOWN.filter(([said, marker]) => said.test(about) && !html.includes(marker)).map(([said]) => said.source);
    expect(saidButAbsent(aboutIndex, index), 'the doc says index.html shows').toEqual([]);
    expect(saidButAbsent(aboutOverview, overview), 'the doc says an overview shows').toEqual([]);
    // What the overview holds is said of the overview: every section of it is named there.
    expect(aboutOverview).toContain('`overview/prototype-{id}.html`');
    expect(
      SHOWN.filter(([said, marker]) => overview.includes(marker) && !said.test(aboutOverview)).map(
        ([, marker]) => marker,
      ),
      'the overview shows, and the doc does not say',
    ).toEqual([]);
  });
});
