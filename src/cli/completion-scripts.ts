/** What an option's value or a command's operands complete to: `archives` are *.zip files (and folders to reach them). */
export type Completes = 'files' | 'archives' | 'text' | { words: string[] };

export interface CompletionOption {
  /** `-o`, `--out`. */
  flags: string[];
  description: string;
  /** Undefined for a flag that takes no value. */
  value: Completes | undefined;
}

export interface CompletionCommand {
  name: string;
  description: string;
  options: CompletionOption[];
  operands: Completes | undefined;
}

export interface CompletionModel {
  name: string;
  options: CompletionOption[];
  commands: CompletionCommand[];
}

/** Names, flags and choices go into the scripts unquoted: they must be plain words. */
function word(text: string): string {
  if (!/^[\w.+@%,:/=-]+$/.test(text)) throw new Error(`not a plain word for a completion script: ${text}`);
  return text;
}

const words = (list: readonly string[]): string => list.map(word).join(' ');

/** POSIX single quotes (bash and zsh): a quote inside becomes '\''. */
const quoted = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

const functionName = (model: CompletionModel): string => `_${word(model.name).replace(/\W/g, '_')}`;

const header = (model: CompletionModel, shell: string): string =>
  `# ${shell} completion for ${model.name}, made by \`${model.name} completion ${shell}\` from its commands.\n`;

export function bashCompletion(model: CompletionModel): string {
  const fn = functionName(model);
  const reply = (completes: Completes): string => {
    if (completes === 'files') return `${fn}_files`;
    if (completes === 'archives') return `${fn}_archives`;
    if (completes === 'text') return 'COMPREPLY=()';
    return `COMPREPLY=($(compgen -W ${quoted(words(completes.words))} -- "$cur"))`;
  };
  const operands = (completes: Completes | undefined): string => {
    if (completes === 'files') return 'files=1';
    if (completes === 'archives') return 'files=archives';
    return completes === undefined || completes === 'text' ? 'choices=' : `choices=${quoted(words(completes.words))}`;
  };
  const valueCases = (options: CompletionOption[]): string =>
    options
      .flatMap((option) => (option.value === undefined ? [] : [[option.flags, option.value] as const]))
      .map(([flags, value]) => `        ${flags.map(word).join('|')}) ${reply(value)}; return ;;\n`)
      .join('');
  const commandCase = (name: string, options: CompletionOption[], completes: Completes | undefined): string => {
    const values = valueCases(options);
    return (
      `    ${name})\n      options=${quoted(words(options.flatMap((option) => option.flags)))}\n` +
      (values === '' ? '' : `      case $prev in\n${values}      esac\n`) +
      `      ${operands(completes)}\n      ;;\n`
    );
  };
  const commandNames = { words: model.commands.map((command) => command.name) };
  // compgen prints one name a line: split at newlines only, or "Team Export.zip" is offered as two
  // words (bash-completion's _filedir does the same; mapfile would leave out macOS's bash 3.2).
  return `${header(model, 'bash')}${fn}_files() {
  compopt -o filenames 2>/dev/null
  local IFS=$'\\n'
  COMPREPLY=($(compgen -f -- "$cur"))
}
${fn}_archives() {
  compopt -o filenames 2>/dev/null
  local IFS=$'\\n'
  COMPREPLY=($(compgen -f -X '!*.zip' -- "$cur") $(compgen -d -- "$cur"))
}
${fn}() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} command= options= files= choices= i
  # --flag=value: bash splits at '=' (COMP_WORDBREAKS).
  if [[ $cur == = ]]; then
    cur=
  elif [[ $prev == = ]]; then
    prev=\${COMP_WORDS[COMP_CWORD-2]}
  fi
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ \${COMP_WORDS[i]} != -* ]]; then
      command=\${COMP_WORDS[i]}
      break
    fi
  done
  case $command in
${commandCase("''", model.options, commandNames)}${model.commands
    .map((command) => commandCase(word(command.name), command.options, command.operands))
    .join('')}    *) files=1 ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
  elif [[ $files == archives ]]; then
    ${fn}_archives
  elif [[ -n $files ]]; then
    ${fn}_files
  else
    COMPREPLY=($(compgen -W "$choices" -- "$cur"))
  fi
}
complete -F ${fn} ${word(model.name)}
`;
}

/** An _arguments spec's description: brackets and colons are its syntax. */
const zshDescription = (text: string): string => text.replace(/[\\[\]:]/g, (char) => `\\${char}`);

function zshAction(completes: Completes, label: string): string {
  if (completes === 'files') return `:${label}:_files`;
  if (completes === 'archives') return `:${label}:_files -g "*.zip"`;
  if (completes === 'text') return `:${label}: `;
  return `:${label}:(${words(completes.words)})`;
}

function zshSpecs(options: CompletionOption[]): string[] {
  return options.flatMap((option) =>
    option.flags.map((flag) => {
      const value = option.value === undefined ? '' : zshAction(option.value, 'value');
      return quoted(`${word(flag)}[${zshDescription(option.description)}]${value}`);
    }),
  );
}

export function zshCompletion(model: CompletionModel): string {
  const fn = functionName(model);
  const continued = (specs: string[], indent: string): string => specs.map((spec) => ` \\\n${indent}${spec}`).join('');
  const commandList = model.commands
    .map((command) => `    ${quoted(`${word(command.name)}:${command.description}`)}\n`)
    .join('');
  const cases = model.commands
    .map((command) => {
      const operands = command.operands === undefined ? [] : [quoted(`*${zshAction(command.operands, 'operand')}`)];
      return `        ${word(command.name)})\n          _arguments -s${continued([...zshSpecs(command.options), ...operands], '            ')}\n          ;;\n`;
    })
    .join('');
  return `#compdef ${word(model.name)}
${header(model, 'zsh')}${fn}() {
  local curcontext=$curcontext state line
  local -a commands
  commands=(
${commandList}  )
  _arguments -C${continued([...zshSpecs(model.options), "'1: :->command'", "'*:: :->operands'"], '    ')}
  case $state in
    command) _describe -t commands ${quoted(`${model.name} command`)} commands ;;
    operands)
      case $words[1] in
${cases}      esac
      ;;
  esac
}
# Loaded from $fpath it completes at once; sourced, it registers itself (after compinit).
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${word(model.name)}
fi
`;
}

/** fish single quotes: only \\ and \\' are escapes inside. */
const fishQuoted = (text: string): string => `'${text.replace(/[\\']/g, (char) => `\\${char}`)}'`;

function fishLine(model: CompletionModel, condition: string, parts: string[], description: string): string {
  const about = description === '' ? '' : ` -d ${fishQuoted(description)}`;
  return `complete -c ${word(model.name)} -n ${fishQuoted(condition)} ${parts.join(' ')}${about}\n`;
}

function fishValue(completes: Completes | undefined): string[] {
  if (completes === undefined) return [];
  if (completes === 'files') return ['-r', '-F'];
  // fish's own __fish_complete_suffix lists the other files too; this keeps *.zip and folders.
  if (completes === 'archives')
    return [
      '-r',
      '-f',
      '-a',
      fishQuoted('(__fish_complete_path (commandline -ct) | string match -r -- "^.*(?:\\.zip|/)\\t")'),
    ];
  if (completes === 'text') return ['-x'];
  return ['-x', '-a', fishQuoted(words(completes.words))];
}

function fishOptions(model: CompletionModel, condition: string, options: CompletionOption[]): string {
  return options
    .map((option) => {
      const names = option.flags.map((flag) =>
        flag.startsWith('--') ? `-l ${word(flag.slice(2))}` : `-s ${word(flag.slice(1))}`,
      );
      return fishLine(model, condition, [...names, ...fishValue(option.value)], option.description);
    })
    .join('');
}

export function fishCompletion(model: CompletionModel): string {
  const top = '__fish_use_subcommand';
  const lines = [
    header(model, 'fish'),
    `complete -c ${word(model.name)} -f\n`,
    fishOptions(model, top, model.options),
    ...model.commands.map((command) => fishLine(model, top, ['-a', word(command.name)], command.description)),
    ...model.commands.map((command) => {
      const inCommand = `__fish_seen_subcommand_from ${word(command.name)}`;
      const operands =
        command.operands === undefined || command.operands === 'text'
          ? ''
          : fishLine(model, inCommand, fishValue(command.operands), '');
      return fishOptions(model, inCommand, command.options) + operands;
    }),
  ];
  return lines.join('');
}
