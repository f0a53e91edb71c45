import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';

/**
 * An opt-in setup file (RABBIT_CPU_LOG=<file>, see vitest.config.ts) that appends, for each test
 * file, the CPU seconds its worker and everything the worker started spent while it ran: the
 * worker itself, the CLIs it spawned and waited for, its Chromium and what that runs. vitest's own
 * durations are wall time, which a loaded machine stretches and which hides spawned processes; CPU
 * is what a two-core machine actually has to give.
 */
const log = process.env['RABBIT_CPU_LOG'];
const TICKS_PER_SECOND = 100;

interface Stat {
  ppid: number;
  /** Own CPU plus that of the children it waited for, in ticks. */
  ticks: number;
}

function stat(pid: string): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]));
    return { ppid: Number(fields[1]), ticks: utime! + stime! + cutime! + cstime! };
  } catch {
    return undefined;
  }
}

/** CPU ticks of this process and every live descendant (dead ones are in their parent's count). */
function treeTicks(): { total: number; own: number } {
  const stats = new Map<number, Stat>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const found = stat(name);
    if (found) stats.set(Number(name), found);
  }
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of stats) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  let total = 0;
  const queue = [process.pid];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    total += stats.get(pid)?.ticks ?? 0;
    queue.push(...(children.get(pid) ?? []));
  }
  const { user, system } = process.cpuUsage();
  return { total, own: ((user + system) / 1e6) * TICKS_PER_SECOND };
}

if (log !== undefined) {
  // A setup file runs before each test file is collected: its imports count too.
  const start = treeTicks();
  const wall = Date.now();
  afterAll(() => {
    const file = relative(process.cwd(), expect.getState().testPath ?? 'unknown');
    const end = treeTicks();
    const cpu = (end.total - start.total) / TICKS_PER_SECOND;
    // The worker's own share; the rest is what it started (CLIs, Chromium, Python, npm).
    const worker = Math.round(end.own - start.own) / TICKS_PER_SECOND;
    appendFileSync(
      log,
      // The worker's resident size: each process it spawns costs it time in proportion (the fork copies its page tables).
      `${JSON.stringify({ file, cpu, worker, wall: (Date.now() - wall) / 1000, pid: process.pid, rssMb: Math.round(process.memoryUsage().rss / 2 ** 20) })}\n`,
    );
  });
}
