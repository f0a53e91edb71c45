/**
 * How far one step of a command's work has come: `done` of `total` units (entries checked, bodies
 * packaged, writes made), `total` null while nothing says how many there are. A core reports it
 * through an `onProgress` callback as often as it likes (per entry is fine); progress/work-tracker.ts
 * turns it into percent and time left, and what it means to a person is the CLI's to say. Here, at
 * the bottom of the layers, so that every command's core can speak it.
 */
export interface WorkProgress<Step extends string = string> {
  step: Step;
  done: number;
  total: number | null;
}
