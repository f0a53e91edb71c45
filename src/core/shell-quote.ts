/**
 * An argument as a POSIX shell reads it back, for every command line the tool prints for a person
 * to copy (a next step, a resume command): a path with a space or a quote in it must not turn
 * `rm -r PATH` into two other paths. Plain words stay as they are, to read easily.
 */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Several arguments, quoted and joined: `rm 'a b' c`. */
export function shellWords(...args: readonly string[]): string {
  return args.map(shellQuote).join(' ');
}
