import { Command, CommanderError, Option } from 'commander';
import { printable } from './terminal-text.js';

/**
 * Commander names an unknown option as it was typed, value and all (`--api-kye=SECRET`,
 * `-xSECRET`), both on stderr and in its error's message, which a --json run repeats on stdout.
 * A mistyped flag that carried the API key would put the key in the terminal and in logs. So an
 * unknown option is named by its name alone, with the suggestion commander makes for that name.
 * Commander never echoes the word after an unknown option (`--api-kye SECRET`): it is left to it.
 */
export function nameUnknownOptionsOnly(command: Command): void {
  const { outputError = (text: string, write: (text: string) => void) => write(text) } = command.configureOutput();
  command.configureOutput({
    outputError: (text, write) => outputError(isUnknownOption(text) ? `${named(command, text)}\n` : text, write),
  });
  command.exitOverride((error) => {
    if (error.code !== 'commander.unknownOption') throw error;
    throw new CommanderError(error.exitCode, error.code, named(command, error.message));
  });
}

const PREFIX = "error: unknown option '";

function isUnknownOption(text: string): boolean {
  return text.startsWith(PREFIX);
}

/**
 * The option's name from what commander quotes: a long option up to the first character no
 * option name holds (its `=`, a `:` typed for it, the space of `"--flag $VALUE"` quoted as one
 * word), a short one by its letter (the rest of `-xSECRET` is its value), shown as printable()
 * shows it.
 */
export function optionNameOf(typed: string): string {
  const name = typed.startsWith('--') ? /^--[A-Za-z0-9-]*/.exec(typed)?.[0] : typed.slice(0, 2);
  return printable(name ?? typed.slice(0, 2));
}

/**
 * Commander's own message for the name alone: a command holding the long options commander would
 * suggest for `command` (its visible ones and its parents', as commander's Help lists them) is
 * handed the name, and its error is the message, suggestion included. A name that is one of the
 * command's options was given its value in a way commander does not take: that is said instead,
 * as "unknown" would be false.
 */
function named(command: Command, message: string): string {
  const typed = message.slice(PREFIX.length);
  const name = optionNameOf(typed);
  const misused = misusedOption(command, name, typed.slice(name.length));
  if (misused !== undefined) return misused;
  const probe = new Command()
    .helpOption(false)
    .exitOverride()
    .configureOutput({ outputError: () => undefined });
  const longs = new Set<string>();
  for (let from: Command | null = command; from !== null; from = from.parent) {
    for (const option of from.createHelp().visibleOptions(from)) if (option.long) longs.add(option.long);
  }
  for (const long of longs) probe.addOption(new Option(long));
  try {
    probe.parse([name], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError && error.code === 'commander.unknownOption') return error.message;
  }
  return `${PREFIX}${name}'`;
}

/**
 * What is wrong when `name` is an option of `command` or of a command above it (hidden ones too)
 * and `rest` (what followed the name in the word, then commander's closing quote) is more than
 * the quote: a flag given a value (`--dry-run=true`), or a value joined by what is not `=`
 * (`--concurrency:4`). Neither the value nor more than its first character is said.
 */
function misusedOption(command: Command, name: string, rest: string): string | undefined {
  if (!name.startsWith('--') || /^'(?:\n|$)/.test(rest)) return undefined;
  for (let from: Command | null = command; from !== null; from = from.parent) {
    const option = from.options.find((candidate) => candidate.long === name);
    if (option === undefined) continue;
    if (!option.required && !option.optional) return `error: option '${name}' takes no value`;
    const joint = printable(Array.from(rest)[0] ?? '');
    return `error: option '${name}' takes its value after '=' or as the next word, not joined to it by '${joint}'`;
  }
  return undefined;
}
