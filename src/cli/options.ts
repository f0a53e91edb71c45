import { InvalidArgumentError } from 'commander';

/** A commander parser for a whole number within bounds, with a message naming the flag. */
export function intOption(flag: string, min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value.trim()))
      throw new InvalidArgumentError(`${flag} takes a whole number from ${min} to ${max}`);
    const number = Number(value);
    if (number < min || number > max)
      throw new InvalidArgumentError(`${flag} takes a whole number from ${min} to ${max}`);
    return number;
  };
}
