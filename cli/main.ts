/**
 * Entry of the `callpipe` command. Each subcommand lives in `cli/commands/<name>.ts` and exports
 * `summary`, `help` and `run(argv)`; this file only dispatches, so adding a command is adding a file.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CliError, type Command } from './command.ts';
import { processSettings, type S3Config } from '../schemas/config.ts';
import { userMessage, type ErrorContext } from './error-message.ts';
import { pipelineConfig } from './stack-client.ts';
import { createObjectStore } from '../activities/storage/object-store.ts';

const COMMANDS = [
  'demo',
  'up',
  'process',
  'backfill',
  'rescore',
  'dictionary',
  'schedule',
  'status',
  'query',
  'open',
  'plan',
  'emulator',
  'fixture',
  'tools',
];

function commandFile(name: string): string {
  return fileURLToPath(new URL(`./commands/${name}.ts`, import.meta.url));
}

async function loadCommand(name: string): Promise<Command | undefined> {
  if (!COMMANDS.includes(name) || !existsSync(commandFile(name))) return undefined;
  return (await import(`./commands/${name}.ts`)) as Command;
}

async function usage(): Promise<string> {
  const lines = ['Usage: callpipe <command> [options]', '', 'Commands:'];
  for (const name of COMMANDS) {
    const cmd = await loadCommand(name);
    if (cmd) lines.push(`  ${name.padEnd(10)} ${cmd.summary}`);
  }
  lines.push('', 'Run `callpipe <command> --help` for the options of one command.');
  return lines.join('\n');
}

async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(await usage());
    return name ? 0 : 2;
  }
  const cmd = await loadCommand(name);
  if (!cmd) throw new CliError(`unknown command '${name}' (see callpipe --help)`);
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(cmd.help);
    return 0;
  }
  return cmd.run(rest);
}

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  async (err: unknown) => {
    // One clear line for the user (cli/error-message.ts); the stack only when asked for.
    console.error(`callpipe: ${await userMessage(err, errorContext())}`);
    if (processSettings().debug && err instanceof Error) console.error(err.stack);
    process.exitCode = err instanceof CliError ? err.exitCode : 1;
  },
);

/** Where S3 is, for a message about it, from the configuration the commands use (read only on error). */
function errorContext(): ErrorContext {
  let s3: S3Config | undefined;
  const config = () => (s3 ??= pipelineConfig().config.s3);
  return {
    s3Endpoint: () => {
      try {
        const c = config();
        return c.endpoint ?? `AWS (${c.region ?? 'the default region'})`;
      } catch {
        return 'the configured endpoint';
      }
    },
    probeS3: async () => {
      const store = createObjectStore(config());
      await store.listPage('', undefined, 1);
    },
  };
}
