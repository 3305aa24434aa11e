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
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
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
