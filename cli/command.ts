/** The shape of a `callpipe` subcommand and the error type that becomes one line and an exit code. */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface Command {
  /** One line for `callpipe --help`. */
  summary: string;
  /** Full text for `callpipe <command> --help`. */
  help: string;
  /** Runs the command; resolves to the process exit code. */
  run(argv: string[]): Promise<number>;
}

/** An error meant for the user: printed as one line, exit code 2 for usage errors by default. */
export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

/**
 * The one-line notice of a deprecated spelling, on stderr (stdout stays clean for --json). The old
 * spelling keeps working, so users' scripts do not break; the notice says what to write instead.
 */
export function warnDeprecated(command: string, used: string, instead: string): void {
  console.error(`callpipe ${command}: ${used} is deprecated; ${instead}`);
}

/** `util.parseArgs` with errors turned into {@link CliError}s that name the command. */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  argv: string[],
  options: T,
  allowPositionals = true,
) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new CliError(`${command}: ${(err as Error).message}`);
  }
}
