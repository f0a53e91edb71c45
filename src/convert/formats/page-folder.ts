import { join } from 'node:path';
import type { PageContent } from '../page-walk.js';
import { makeFolder, writeAtomically } from '../write-output.js';
import type { PrototypeJob } from './document-format.js';

/** What a format drew on one page, for the report. */
export interface PageStats {
  shapes: number;
  links: number;
  /** Targets that name no page of the prototype: the element is kept, the link is not. */
  danglingTargets: { elementId: string; target: string }[];
}

/** Adds one page's shapes, links, discussions and dangling targets to the prototype's report. */
export function countPage(job: PrototypeJob, content: PageContent, stats: PageStats): void {
  job.report.shapes += stats.shapes;
  job.report.links += stats.links;
  job.report.discussions += content.discussions.length;
  for (const target of stats.danglingTargets) job.dangling(content.page.id, target);
}

/**
 * A folder per prototype (`stem`) of one file per page, each named by `fileOf` from the page's
 * place and id and written as its page is read; `render` gets every page's file name for links.
 */
export async function writePageFolder(
  job: PrototypeJob,
  fileOf: (number: number, pageId: string) => string,
  render: (content: PageContent, fileOfPage: ReadonlyMap<string, string>) => { body: string; stats: PageStats },
): Promise<string> {
  await makeFolder(join(job.out, job.stem));
  const fileOfPage = new Map(job.plan.pages.map((page, index) => [page.id, fileOf(index + 1, page.id)]));
  for await (const content of job.pages) {
    const { body, stats } = render(content, fileOfPage);
    await writeAtomically(join(job.out, job.stem, fileOfPage.get(content.page.id) as string), [body]);
    countPage(job, content, stats);
  }
  return job.stem;
}
