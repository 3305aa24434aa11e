/** `callpipe up`: the local stack in the foreground until Ctrl-C or SIGTERM. */
import { parseCommandArgs, CliError } from '../command.ts';
import { loadConfig } from '../../schemas/config.ts';
import { startStack, readStackFile } from '../stack/stack.ts';
import { PortTakenError } from '../stack/ports.ts';

export const summary = 'starts the local stack (Temporal + Web UI, S3, emulator, workers) in the foreground';
export const help = `Usage: callpipe up [--ports fixed|auto] [--json] [--no-workers] [--no-emulator]

Starts, in order and with health checks: the Temporal dev server (state in $CALLPIPE_HOME/temporal.sqlite,
Web UI on), the S3 server (SeaweedFS, data in $CALLPIPE_HOME/s3), the service emulator and the workers.
Stops everything on Ctrl-C or SIGTERM.

  --ports auto   take free ports when the configured ones are taken (default: refuse)
  --json         print one JSON line with every address once all is healthy`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(
    'up',
    argv,
    {
      ports: { type: 'string' },
      json: { type: 'boolean', default: false },
      'no-workers': { type: 'boolean', default: false },
      'no-emulator': { type: 'boolean', default: false },
    },
    false,
  );
  if (values.ports && values.ports !== 'fixed' && values.ports !== 'auto') {
    throw new CliError(`up: --ports must be 'fixed' or 'auto', not '${values.ports}'`);
  }
  const config = loadConfig();
  const running = readStackFile(config.stack.home);
  if (running)
    throw new CliError(`a stack is already running from ${config.stack.home} (pid ${running.pid})`, 1);

  const log = values.json ? () => {} : (line: string) => console.error(line);
  let stack;
  try {
    stack = await startStack({
      config,
      ports: values.ports as 'fixed' | 'auto' | undefined,
      workers: !values['no-workers'],
      emulator: !values['no-emulator'],
      log,
    });
  } catch (err) {
    if (err instanceof PortTakenError) throw new CliError(err.message, 1);
    throw err;
  }
  const a = stack.addresses;
  if (values.json) {
    console.log(JSON.stringify(a));
  } else {
    console.log(
      [
        'callpipe stack is up:',
        `  Temporal     ${a.temporalAddress} (namespace ${a.namespace})`,
        `  Web UI       ${a.webUiUrl}`,
        `  S3           ${a.s3Endpoint} (bucket ${a.bucket})`,
        a.emulatorUrl ? `  Emulator     ${a.serviceBaseUrl}` : undefined,
        a.metricsUrl ? `  Metrics      ${a.metricsUrl}` : undefined,
        `  State        ${a.home}`,
        'Press Ctrl-C to stop.',
      ]
        .filter(Boolean)
        .join('\n'),
    );
  }

  await new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      log(`received ${signal}, stopping the stack…`);
      resolve();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  await stack.stop();
  log('stack stopped');
  return 0;
}
