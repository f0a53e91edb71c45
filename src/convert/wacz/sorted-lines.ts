import { createReadStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * Lines sorted in the byte order of their UTF-8 (what a CDXJ reader's binary search expects),
 * however many there are: up to RUN_LINES are sorted in memory, each full run is written to the
 * work folder, and the runs are merged as the lines are read back. Memory holds one run and one
 * line of each run being merged.
 */
const RUN_LINES = 16_384;

export class SortedLines {
  private run: Buffer[] = [];
  private readonly runs: string[] = [];

  constructor(
    private readonly workDir: string,
    private readonly runLines = RUN_LINES,
  ) {}

  async add(line: string): Promise<void> {
    this.run.push(Buffer.from(line, 'utf8'));
    if (this.run.length >= this.runLines) await this.spill();
  }

  /** Every line added, in order, each without its newline. */
  async *sorted(): AsyncGenerator<string> {
    if (this.runs.length === 0) {
      for (const line of this.run.sort(Buffer.compare)) yield line.toString('utf8');
      return;
    }
    if (this.run.length > 0) await this.spill();
    const readers = this.runs.map((file) =>
      createInterface({ input: createReadStream(file), crlfDelay: Infinity })[Symbol.asyncIterator](),
    );
    const heads: (Buffer | undefined)[] = [];
    for (const reader of readers) heads.push(await nextLine(reader));
    for (;;) {
      let least = -1;
      for (let i = 0; i < heads.length; i++) {
        const head = heads[i];
        if (head !== undefined && (least < 0 || Buffer.compare(head, heads[least] as Buffer) < 0)) least = i;
      }
      if (least < 0) return;
      yield (heads[least] as Buffer).toString('utf8');
      heads[least] = await nextLine(readers[least] as AsyncIterator<string>);
    }
  }

  private async spill(): Promise<void> {
    const file = join(this.workDir, `index-run-${this.runs.length}`);
    const sorted = this.run.sort(Buffer.compare);
    this.run = [];
    await writeFile(file, Buffer.concat(sorted.flatMap((line) => [line, NEWLINE])), { mode: 0o600, flag: 'wx' });
    this.runs.push(file);
  }
}

const NEWLINE = Buffer.from('\n');

async function nextLine(reader: AsyncIterator<string>): Promise<Buffer | undefined> {
  const next = await reader.next();
  return next.done === true ? undefined : Buffer.from(next.value, 'utf8');
}
