import { createRequire } from 'node:module';
import type * as Commander from 'commander';

/**
 * commander, loaded as the CommonJS package it is. Importing it as an ES module goes through its
 * ESM wrapper and the package's export map first: about 2 ms of a start-up budget (`--version`,
 * `--help`) of some 30 ms over node's own. CLI modules take commander's classes from here (types may
 * still come from the package: they cost nothing at run time).
 */
const commander = createRequire(import.meta.url)('commander') as typeof Commander;

export const { Command, CommanderError, InvalidArgumentError, Option } = commander;
export type Command = Commander.Command;
export type CommanderError = Commander.CommanderError;
export type Option = Commander.Option;
