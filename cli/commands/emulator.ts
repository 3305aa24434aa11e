/**
 * `callpipe emulator`: runs the Language Analysis Service emulator alone (emulator/README.md). Prints one
 * JSON line with the addresses and credentials once listening, and stops on SIGINT/SIGTERM.
 */
import { CliError, parseCommandArgs } from '../command.ts';
import { DEFAULTS } from '../../schemas/config.ts';
import { processSettings } from '../../schemas/process-settings.ts';
import { startEmulator, type EmulatorOptions } from '../../emulator/server.ts';
import { defaultAccountInput } from '../../emulator/accounts.ts';
import { stopWithParent } from '../../workers/parent-watch.ts';

export const summary = 'runs the Language Analysis Service emulator alone';

export const help = `Usage: callpipe emulator [options]

Runs a local, faithful emulator of the Language Analysis Service (tokens, text analysis, file and
stream speech recognition of synthetic DTMF recordings), with fault injection. Prints one JSON line
{baseUrl, authUrl, clientId, clientSecret, domainId} when listening; stops on Ctrl-C.

Options:
  --port N                 port (default ${DEFAULTS.stack.emulatorPort}; 0 = any free port)
  --host ADDR              address to listen on (default 127.0.0.1)
  --speed X                time scale: stream time rules are divided by X (default CALLPIPE_EMULATOR_SPEED or 1)
  --file-rtf R             a file request is answered after R × its audio seconds, ÷ speed (default
                           CALLPIPE_EMULATOR_FILE_RTF or 0.25)
  --pacing on|off          refuse audio sent faster than the recognizer works (default on)
  --ceiling X              the recognizer works at X × real time: the fastest pacing accepted (default
                           CALLPIPE_EMULATOR_CEILING or the speed)
  --buffer-seconds S       audio the recognizer buffers ahead of its position (default 2)
  --strict-chunks          refuse audio requests that are not 240 ms (413)
  --deadline-slack-ms MS   wall-clock tolerance added to the 1-s deadlines and the idle timeout (÷ speed)
                           (default CALLPIPE_EMULATOR_DEADLINE_SLACK_MS or 250; tests on a loaded machine
                           raise it so that a scheduling stall is not taken for a client's fault)
  --phrasebook FILE        phrasebook JSON (id → text) (default CALLPIPE_EMULATOR_PHRASEBOOK or the shipped one)
  --faults FILE            fault-injection JSON (default CALLPIPE_EMULATOR_FAULTS)
  --accounts FILE          accounts JSON (default: one Enterprise account, callpipe-local)
  --kind KIND              kind of the default account: Enterprise or Developers
  --concurrent-sessions N  concurrent recognition sessions of the default account (default 64)
  --rate-limit R           requests per second of the default account's bucket (0 = off; default 50)
  --usage-limit N          uses per 24 h of the default account (default: none for Enterprise)
  --token-lifetime S       access-token lifetime in seconds (default 86400)
  --request-log FILE       append a JSON line per request
  --seed N                 seed of fault injection (default 1)`;

function number(name: string, value: string | undefined, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min)
    throw new CliError(`emulator: --${name} must be a number ≥ ${min}, got '${value}'`);
  return n;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(
    'emulator',
    argv,
    {
      port: { type: 'string' },
      host: { type: 'string' },
      speed: { type: 'string' },
      'file-rtf': { type: 'string' },
      pacing: { type: 'string' },
      'buffer-seconds': { type: 'string' },
      'strict-chunks': { type: 'boolean' },
      'deadline-slack-ms': { type: 'string' },
      phrasebook: { type: 'string' },
      faults: { type: 'string' },
      accounts: { type: 'string' },
      kind: { type: 'string' },
      'concurrent-sessions': { type: 'string' },
      ceiling: { type: 'string' },
      'rate-limit': { type: 'string' },
      'usage-limit': { type: 'string' },
      'token-lifetime': { type: 'string' },
      'request-log': { type: 'string' },
      seed: { type: 'string' },
    },
    false,
  );
  const env = processSettings();
  if (values.pacing !== undefined && values.pacing !== 'on' && values.pacing !== 'off') {
    throw new CliError(`emulator: --pacing must be on or off, got '${values.pacing}'`);
  }
  if (values.kind !== undefined && values.kind !== 'Enterprise' && values.kind !== 'Developers') {
    throw new CliError(`emulator: --kind must be Enterprise or Developers, got '${values.kind}'`);
  }
  const speed = number('speed', values.speed ?? env.emulatorSpeed);
  if (speed !== undefined && speed <= 0) throw new CliError('emulator: --speed must be positive');
  const ceiling = number('ceiling', values.ceiling ?? env.emulatorCeiling);
  if (ceiling !== undefined && ceiling <= 0) throw new CliError('emulator: --ceiling must be positive');
  const rate = number('rate-limit', values['rate-limit']);
  const concurrent = number('concurrent-sessions', values['concurrent-sessions'], 1);
  const usage = number('usage-limit', values['usage-limit'], 1);
  const options: EmulatorOptions = {
    port: number('port', values.port) ?? DEFAULTS.stack.emulatorPort,
    host: values.host,
    speed,
    ceiling,
    fileRtf: number('file-rtf', values['file-rtf'] ?? env.emulatorFileRtf),
    pacing: values.pacing as 'on' | 'off' | undefined,
    bufferSeconds: number('buffer-seconds', values['buffer-seconds']),
    strictChunks: values['strict-chunks'] ?? false,
    deadlineSlackMs: number('deadline-slack-ms', values['deadline-slack-ms'] ?? env.emulatorDeadlineSlackMs),
    phrasebookPath: values.phrasebook ?? env.emulatorPhrasebook,
    faults: values.faults ?? env.emulatorFaults,
    accountsPath: values.accounts,
    tokenLifetimeSeconds: number('token-lifetime', values['token-lifetime'], 1),
    requestLogPath: values['request-log'],
    seed: number('seed', values.seed),
  };
  if (
    !values.accounts &&
    (values.kind || concurrent !== undefined || rate !== undefined || usage !== undefined)
  ) {
    options.accounts = [
      defaultAccountInput({
        ...(values.kind ? { kind: values.kind as 'Enterprise' | 'Developers' } : {}),
        ...(concurrent !== undefined ? { concurrentSessions: concurrent } : {}),
        ...(rate !== undefined
          ? {
              rateLimit:
                rate === 0 ? null : { requestsPerSecond: rate, burst: Math.max(1, Math.ceil(rate * 2)) },
            }
          : {}),
        ...(usage !== undefined ? { usageLimitPer24h: usage } : {}),
      }),
    ];
  }
  let emulator;
  try {
    emulator = await startEmulator(options);
  } catch (err) {
    throw new CliError(`emulator: ${(err as Error).message}`, 1);
  }
  const { baseUrl, authUrl, clientId, clientSecret, domainId } = emulator;
  process.stdout.write(JSON.stringify({ baseUrl, authUrl, clientId, clientSecret, domainId }) + '\n');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    stopWithParent();
  });
  await emulator.close();
  return 0;
}
