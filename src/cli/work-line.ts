import type { WorkSnapshot } from '../progress/work-tracker.js';
import { byteSize } from './format.js';
import { BAR, duration, fittedLine, type LinePart } from './progress-line.js';

/** Pure text for the progress of counted work; src/cli/work-progress.ts decides where and when it goes. */

/** What one step of a command is called, as its progress names it. */
export interface StepWords {
  /** What was done to each unit, in the past: `checked`; or the whole step when nothing is counted. */
  verb: string;
  /** The units counted, plural (`entries`); `bytes` counts bytes and shows them in KiB/MiB/GiB; null counts nothing. */
  unit: string | 'bytes' | null;
}

/** Each step's words, by the step names the command's core reports. */
export type WorkWords = Readonly<Record<string, StepWords>>;

const STARTING: StepWords = { verb: 'starting', unit: null };

function wordsOf(s: WorkSnapshot, words: WorkWords): StepWords {
  return s.step === null ? STARTING : (words[s.step] ?? { verb: s.step, unit: null });
}

function amount(value: number, unit: string): string {
  return unit === 'bytes' ? byteSize(value) : String(value);
}

/** `1234 of 2740 entries`, `1234 entries` without a total, `1.2 of 3.4 GiB`. */
function countText(s: WorkSnapshot, unit: string): string {
  const noun = unit === 'bytes' ? '' : ` ${unit}`;
  if (s.total === null) return `${amount(s.done, unit)}${noun}`;
  return `${amount(Math.min(s.done, s.total), unit)} of ${amount(s.total, unit)}${noun}`;
}

/**
 * The plain line for a log or a terminal without a width: `progress: checked 1234 of 2740 entries
 * (45%), 3m05s left, 40s elapsed`. Without a total, the count and the time only: nothing to
 * estimate the rest from.
 */
export function workLine(s: WorkSnapshot, words: WorkWords): string {
  const { verb, unit } = wordsOf(s, words);
  const elapsed = `${duration(s.elapsedMs)} elapsed`;
  if (unit === null) return `progress: ${verb}, ${elapsed}`;
  if (s.percent === null) return `progress: ${verb} ${countText(s, unit)}, ${elapsed}`;
  const left = s.etaMs === null ? 'time left not known yet' : `${duration(s.etaMs)} left`;
  return `progress: ${verb} ${countText(s, unit)} (${Math.floor(s.percent)}%), ${left}, ${elapsed}`;
}

/**
 * The terminal line, at most `columns` wide: `checked 45% [#####-----] 1234/2740 entries 3m05s
 * left`. On a narrow terminal the bar shrinks, then the least needed figures go; the time left
 * goes last.
 */
export function workBar(s: WorkSnapshot, words: WorkWords, columns: number): string {
  const { verb, unit } = wordsOf(s, words);
  const elapsed = { text: `${duration(s.elapsedMs)} elapsed`, keep: 1 };
  const parts: LinePart[] =
    unit === null
      ? [{ text: verb, keep: 9 }, elapsed]
      : s.percent === null
        ? [{ text: verb, keep: 9 }, { text: countText(s, unit).replace(' of ', '/'), keep: 5 }, elapsed]
        : [
            { text: verb, keep: 3 },
            { text: `${Math.floor(s.percent)}%`, keep: 8 },
            { text: BAR, keep: 2 },
            { text: countText(s, unit).replace(' of ', '/'), keep: 4 },
            { text: `${s.etaMs === null ? '--' : duration(s.etaMs)} left`, keep: 9 },
          ];
  return fittedLine(parts, s.percent, columns);
}
