/**
 * `--recognition stream|file|auto`, as `process`, `backfill`, `watch` and `schedule nightly` take it: the
 * mode of the calls they start (schemas/recognition.ts), over `CALLPIPE_RECOGNITION`.
 */
import { CliError } from './command.ts';
import { RECOGNITION_MODES, type RecognitionMode } from '../schemas/recognition.ts';

export const RECOGNITION_OPTION = { recognition: { type: 'string' } } as const;

/** The help line of the option, its description starting at `column`. */
export function recognitionHelp(column: number): string {
  return `  ${'--recognition <mode>'.padEnd(column - 2)}stream (paced sessions), file (pieces of at most 58 s cut in
${' '.repeat(column)}silence, unpaced) or auto (file while the service answers file requests faster than
${' '.repeat(column)}real time); default CALLPIPE_RECOGNITION or stream`;
}

/** The mode a command was given, checked; undefined when not given (the configuration's stands). */
export function recognitionFlag(command: string, value: string | undefined): RecognitionMode | undefined {
  if (value === undefined) return undefined;
  if (!(RECOGNITION_MODES as readonly string[]).includes(value))
    throw new CliError(`${command}: --recognition must be ${RECOGNITION_MODES.join(', ')} (got '${value}')`);
  return value as RecognitionMode;
}
