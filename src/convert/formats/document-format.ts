import type { PageContent, PagePlan } from '../page-walk.js';
import type { PrototypeReader } from '../prototype-data.js';
import type { PrototypeReport } from '../report.js';
import type { XmlText } from '../xml-text.js';

/**
 * One output of `convert --to`: a file in this folder that implements this, and a line in
 * registry.ts. What every format shares (reading the prototype, the checks on its id, counting
 * pages and layers, the report) is done once, in convert-prototype.ts.
 */
export interface DocumentFormat {
  /** The `--to` value. */
  readonly name: string;
  /** What a prototype becomes, for `--help`: "one editable document per prototype". */
  readonly help: string;
  /** What the closing line says was written: "draw.io documents". */
  readonly written: string;
  /** The `--out` folder of the example in `--help`. */
  readonly exampleOut: string;
  /** A prototype without pages still gets a document (a PDF binder has its title page). */
  readonly withoutPages: boolean;
  /** Writes one prototype into `job.out` and returns the file or folder written, relative to it. */
  write(job: PrototypeJob): Promise<string>;
}

export interface PrototypeJob {
  reader: PrototypeReader;
  plan: PagePlan;
  /** The pages one at a time, counted into the report's pages and layers as they go by. */
  pages: AsyncIterable<PageContent>;
  /** Cleans and escapes text for XML, counting what it drops into the report. */
  text: XmlText;
  /** The format adds its shapes, links, discussions and generic types. */
  report: PrototypeReport;
  /** The output folder. */
  out: string;
  /** `{id}-{name}`, safe on any file system: the file name before its extension, or the folder. */
  stem: string;
  /** Records an element whose target names no page: it is drawn without the link. */
  dangling(pageId: string, dangling: { elementId: string; target: string }): void;
}
