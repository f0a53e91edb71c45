import { Argument, type Command, type Option } from 'commander';
import {
  bashCompletion,
  fishCompletion,
  zshCompletion,
  type CompletionCommand,
  type CompletionModel,
  type CompletionOption,
  type Completes,
} from '../completion-scripts.js';
import type { CliIO } from '../run.js';

const SHELLS = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion } as const;
type Shell = keyof typeof SHELLS;

/**
 * `completion SHELL` prints a script made from the commands as they are defined when it runs, so
 * the completion can never lag behind a flag. program.ts registers every command before this one runs.
 */
export function registerCompletion(program: Command, io: CliIO): void {
  program
    .command('completion')
    .description('print a completion script for bash, zsh or fish, made from the commands themselves')
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(Object.keys(SHELLS)))
    .addHelpText(
      'after',
      `
Examples:
  source <(rabbit-export completion bash)                 # in ~/.bashrc
  rabbit-export completion zsh > "\${fpath[1]}/_rabbit-export"
  rabbit-export completion fish > ~/.config/fish/completions/rabbit-export.fish`,
    )
    .action((shell: Shell) => {
      io.stdout.write(SHELLS[shell](completionModel(program)));
    });
}

/** What each command and option takes, read from commander's definitions (hidden ones left out). */
export function completionModel(program: Command): CompletionModel {
  const help = program.createHelp();
  const commands = help.visibleCommands(program).map((command): CompletionCommand => ({
    name: command.name(),
    description: firstLine(command.summary() || command.description()),
    options: help.visibleOptions(command).map(completionOption),
    operands: operandsOf(program, command),
  }));
  return {
    name: program.name(),
    options: help.visibleOptions(program).map(completionOption),
    commands,
  };
}

function completionOption(option: Option): CompletionOption {
  return {
    flags: [option.short, option.long].filter((flag): flag is string => flag !== undefined),
    description: firstLine(option.description),
    value: option.required || option.optional ? valueOf(option.argChoices, placeholderOf(option.flags)) : undefined,
  };
}

function operandsOf(program: Command, command: Command): Completes | undefined {
  // commander's own `help [command]` takes the name of a command.
  if (command.name() === 'help') return { words: program.commands.map((each) => each.name()) };
  const [first] = command.registeredArguments;
  return first === undefined ? undefined : valueOf(first.argChoices, first.name());
}

/**
 * Choices when there are some; archives (*.zip) where the placeholder is one (`<file.zip>`,
 * `<a.zip>`); files when it names another (`<dir>`, `<path>`); else free text.
 */
function valueOf(choices: readonly string[] | undefined, placeholder: string): Completes {
  if (choices !== undefined) return { words: [...choices] };
  if (/\.zip$/i.test(placeholder)) return 'archives';
  return /file|dir|zip|path|folder|\.prom/i.test(placeholder) ? 'files' : 'text';
}

/** `file.zip` of `-o, --out <file.zip>`. */
function placeholderOf(flags: string): string {
  return /[<[]([^>\]]*)[>\]]/.exec(flags)?.[1] ?? '';
}

function firstLine(text: string): string {
  return text.split('\n')[0]?.trim() ?? '';
}
