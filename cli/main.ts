/**
 * Entry of the `callpipe` command. Each subcommand lives in `cli/commands/<name>.ts` and exports
 * `summary`, `help` and `run(argv)`; this file only dispatches, so adding a command is adding a file.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CliError, type Command } from './command.ts';
import { processSettings } from '../schemas/process-settings.ts';
import type { ErrorContext } from './error-message.ts';

const COMMANDS = [
  'demo',
  'up',
  'process',
  'backfill',
  'watch',
  'rescore',
  'dictionary',
  'schedule',
  'status',
  'query',
  'find',
  'events',
  'export',
  'forget',
  'open',
  'codec-server',
  'deploy',
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
    console.error(`callpipe: ${await messageOf(err)}`);
    if (processSettings().debug && err instanceof Error) console.error(err.stack);
    process.exitCode = err instanceof CliError ? err.exitCode : 1;
  },
);

/** The line a user reads for `err` (cli/error-message.ts), or its own message if that cannot load. */
async function messageOf(err: unknown): Promise<string> {
  try {
    const { userMessage } = await import('./error-message.ts');
    return await userMessage(err, await errorContext());
  } catch {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * Where S3 is, for a message about it, from the configuration the commands use: loaded only on an
 * error, so a command's own imports stay its own.
 */
async function errorContext(): Promise<ErrorContext> {
  try {
    const [{ pipelineConfig }, { createObjectStore }] = await Promise.all([
      import('./stack-client.ts'),
      import('../activities/storage/object-store.ts'),
    ]);
    const s3 = pipelineConfig().config.s3;
    return {
      s3Endpoint: () => s3.endpoint ?? `AWS (${s3.region ?? 'the default region'})`,
      probeS3: async () => {
        await createObjectStore(s3).listPage('', undefined, 1);
      },
    };
  } catch {
    return { s3Endpoint: () => 'the configured S3 endpoint' };
  }
}
