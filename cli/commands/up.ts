/** `callpipe up`: the local stack in the foreground until Ctrl-C or SIGTERM. */
import { parseCommandArgs, CliError } from '../command.ts';
import { loadConfig } from '../../schemas/config-loader.ts';
import { startStack, StackRunningError } from '../stack/stack.ts';
import { PortTakenError } from '../stack/ports.ts';
import { MAX_RESTARTS, RESTART_WINDOW_MS, superviseStack } from '../stack/supervisor.ts';

export const summary = 'starts the local stack (Temporal + Web UI, S3, emulator, workers) in the foreground';
export const help = `Usage: callpipe up [--ports fixed|auto] [--json] [--no-workers] [--no-emulator] [--temporal dev|postgresql]

Starts, in order and with health checks: the Temporal dev server (state in $CALLPIPE_HOME/temporal.sqlite,
Web UI on), the S3 server (SeaweedFS, data in $CALLPIPE_HOME/s3), the service emulator and the workers.
Stops everything on Ctrl-C, SIGTERM or SIGHUP; if this command is killed outright (SIGKILL), its children
stop by themselves, and the next \`callpipe up\` in the same $CALLPIPE_HOME stops whatever a killed one left.
When a part of the stack ends on its own, it says so at once on stderr (which part, its exit code or
signal, the last lines of its log) and starts it again, at most ${MAX_RESTARTS} times within ${RESTART_WINDOW_MS / 60_000} minutes; past that
it stops the stack and exits with status 1.

  --ports auto   take free ports when the configured ones are taken (default: refuse)
  --json         print one JSON line with every address once all is healthy
  --temporal postgresql
                 the production topology's Temporal instead of the dev server: the Temporal server and its
                 Web UI server on a PostgreSQL cluster in $CALLPIPE_HOME/postgresql (Debian's postgresql;
                 the pinned server is built with Go into .tools/ on first use, 10–20 minutes)`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(
    'up',
    argv,
    {
      ports: { type: 'string' },
      json: { type: 'boolean', default: false },
      'no-workers': { type: 'boolean', default: false },
      'no-emulator': { type: 'boolean', default: false },
      temporal: { type: 'string', default: 'dev' },
    },
    false,
  );
  if (values.ports && values.ports !== 'fixed' && values.ports !== 'auto') {
    throw new CliError(`up: --ports must be 'fixed' or 'auto', not '${values.ports}'`);
  }
  if (values.temporal !== 'dev' && values.temporal !== 'postgresql') {
    throw new CliError(`up: --temporal must be 'dev' or 'postgresql', not '${values.temporal}'`);
  }
  const config = loadConfig();
  // Everything this command and its stack write under CALLPIPE_HOME (state, logs, profiles) is the user's
  // alone; the stack's children start with the same mask (cli/stack/process.ts).
  process.umask(0o077);
  // Whoever reads our output may go away (`callpipe up | head -1`): a line to a closed pipe is dropped,
  // never an error that would end this process before it stops the stack.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

  const notice = (line: string) => console.error(line);
  const log = values.json ? () => {} : notice;
  let stack;
  try {
    stack = await startStack({
      config,
      ports: values.ports as 'fixed' | 'auto' | undefined,
      workers: !values['no-workers'],
      emulator: !values['no-emulator'],
      temporal: values.temporal,
      log,
      notice,
    });
  } catch (err) {
    if (err instanceof PortTakenError || err instanceof StackRunningError) throw new CliError(err.message, 1);
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
        a.codecServerUrl
          ? `  Codec server ${a.codecServerUrl} (the Web UI decodes payloads with it; token in ${a.home}/codec-server-token)`
          : undefined,
        `  State        ${a.home}`,
        'Press Ctrl-C to stop.',
      ]
        .filter(Boolean)
        .join('\n'),
    );
  }

  const supervisor = superviseStack(stack, { notice });
  const gaveUp = await Promise.race([
    new Promise<undefined>((resolve) => {
      const onSignal = (signal: string) => {
        log(`received ${signal}, stopping the stack…`);
        resolve(undefined);
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      // A closed terminal: stop in order too, rather than die and leave it to the children's watches.
      process.once('SIGHUP', onSignal);
    }),
    supervisor.gaveUp,
  ]);
  supervisor.stop();
  if (gaveUp) notice(`callpipe up: ${gaveUp}`);
  await stack.stop();
  log('stack stopped');
  return gaveUp ? 1 : 0;
}
