import { JournalCache, JournalWriter, readJournal } from './journal.js';
import { KeyedSpill } from './keyed-spill.js';
import { acquireLock, type Lock } from './lock.js';
import { Spool } from './spool.js';
import {
  checkOutput,
  makeWorkDir,
  markResumable,
  outputPaths,
  removeStaleTemps,
  removeWorkDir,
  type OutputPaths,
} from './work-dir.js';

/**
 * What an export keeps on disk beside its output while it runs: the spool of bodies, the journal
 * that lets the same command resume after a kill, the archive's entries filed by prototype, and
 * the lock that keeps two runs off the same output.
 */
export interface Workspace {
  paths: OutputPaths;
  spool: Spool;
  journal: JournalWriter;
  /** Bodies an interrupted earlier run saved, when there are any. */
  resumed: JournalCache | undefined;
  entries: KeyedSpill;
  /**
   * Closes everything. The work directory goes after a finished run; after an interruption it is
   * kept for the next, and after a failure it is kept only if an earlier run had left it (the
   * progress saved then is still worth having). After a run that gave up on an outage
   * ('resumable') it is kept too, and the archive written is marked as one the next run may replace.
   */
  close(outcome: Outcome): Promise<void>;
}

type Outcome = 'done' | 'interrupted' | 'failed' | 'resumable';

export async function openWorkspace(
  out: string,
  baseUrl: string,
  force: boolean,
  onSetAside: (reason: string) => void,
): Promise<Workspace> {
  const paths = outputPaths(out);
  await checkOutput(paths, force);
  const hadWorkDir = await makeWorkDir(paths);
  await removeStaleTemps(paths);
  const lock: Lock = await acquireLock(paths.lock, `the output ${paths.out}`);
  const opened: { close(): Promise<void> }[] = [];
  const close = async (outcome: Outcome): Promise<void> => {
    for (const part of opened.reverse()) await part.close();
    if (outcome === 'resumable') await markResumable(paths);
    await lock.release();
    if (outcome === 'done' || (outcome === 'failed' && !hadWorkDir)) await removeWorkDir(paths);
  };
  try {
    // The journal first: one that may not be trusted stops the run before anything is made.
    const saved = await readJournal(paths.journal, baseUrl);
    const spool = new Spool(paths.spool);
    await spool.init();
    opened.push(spool);
    if (saved.setAside) onSetAside(saved.setAside);
    const journal = await JournalWriter.open(paths.journal, baseUrl, saved.records === 0, spool);
    opened.push(journal);
    const entries = await KeyedSpill.create(paths.entries);
    opened.push(entries);
    const resumed = saved.records > 0 ? new JournalCache(saved, spool) : undefined;
    return { paths, spool, journal, resumed, entries, close };
  } catch (error) {
    await close('failed');
    throw error;
  }
}
