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
 * The option's name from what commander quotes: a long option up to its `=`, a short one by its
 * letter (the rest of `-xSECRET` is its value), shown as printable() shows it.
 */
export function optionNameOf(typed: string): string {
  const name = typed.startsWith('--') ? /^--[^=']*/.exec(typed)?.[0] : typed.slice(0, 2);
  return printable(name ?? typed.slice(0, 2));
}

/**
 * Commander's own message for the name alone: a command holding the long options commander would
 * suggest for `command` (its visible ones and its parents', as commander's Help lists them) is
 * handed the name, and its error is the message, suggestion included.
 */
function named(command: Command, message: string): string {
  const name = optionNameOf(message.slice(PREFIX.length));
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
