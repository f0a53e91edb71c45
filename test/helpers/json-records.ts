/** The --json records a run printed (docs/json.md), for tests that read them. */
export function recordsOf(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The records of one type, as the shape the test reads. */
export function recordsOfType<T>(stdout: string, type: string): T[] {
  return recordsOf(stdout).filter((record) => record['type'] === type) as T[];
}

/** The run's summary: its last record. */
export function summaryOf<T = Record<string, unknown>>(stdout: string): T {
  const last = recordsOf(stdout).at(-1);
  if (last?.['type'] !== 'summary') throw new Error(`the last --json record is not a summary: ${stdout.slice(-300)}`);
  return last as T;
}
