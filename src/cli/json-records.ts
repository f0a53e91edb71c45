import { terminalJson } from './terminal-text.js';

/**
 * The one vocabulary of `--json`: every line any command prints is one object with a `type`, the
 * `schemaVersion` of the shapes and the `command` that printed it, then the type's own fields.
 * schema/records.schema.json holds every shape and docs/json.md shows each; a field added, renamed
 * or dropped here is a change to that schema, and test/cli/json-records.test.ts fails until both agree.
 */

/**
 * Raised when a record loses a field or a field changes meaning. Adding an optional field keeps
 * the version (readers ignore what they do not know) but is still written into the schema.
 */
export const RECORD_SCHEMA_VERSION = 1;

/** What a line is; its shape follows from the type and the command together. */
export type RecordType =
  /** The last line of every run, whether it succeeded or not: `ok`, `exitCode`, then the result. */
  | 'summary'
  /** How far a long run is, at --stats-interval. */
  | 'progress'
  /** The service went away or came back. */
  | 'outage'
  /** One search hit. */
  | 'hit'
  /** One difference between an archive and the service. */
  | 'difference'
  /** One row of a listing (ls). */
  | 'row'
  /** serve's first line: where the sample service listens, with its keys. */
  | 'ready';

/** The commands that print records. */
export const RECORD_COMMANDS = [
  'export',
  'backup',
  'verify',
  'ls',
  'diff',
  'search',
  'restore',
  'convert',
  'serve',
] as const;

/** A command that prints records; null for a command line commander could not resolve to one. */
export type RecordCommand = (typeof RECORD_COMMANDS)[number] | null;

/** The command a --json usage failure is reported for: the one the command line names, if it prints records. */
export function recordCommandOf(args: readonly string[]): RecordCommand {
  const first = args[0];
  return RECORD_COMMANDS.find((name) => name === first) ?? null;
}

/** A record: the three envelope fields first (a reader sees them first), then the type's own. */
export function jsonRecord(
  command: RecordCommand,
  type: RecordType,
  fields: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const envelope = { type, schemaVersion: RECORD_SCHEMA_VERSION, command };
  // First so that a reader sees it first; again last so that no field of the result can replace it.
  return Object.assign({}, envelope, fields, envelope);
}

/** The record as one terminal-safe line, newline included. */
export function recordLine(
  command: RecordCommand,
  type: RecordType,
  fields: Readonly<Record<string, unknown>>,
): string {
  return `${terminalJson(jsonRecord(command, type, fields))}\n`;
}
