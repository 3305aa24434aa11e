/**
 * How commands reach the pipeline: the configuration of a running local stack (found through
 * CALLPIPE_HOME) when there is one, else the configuration as set; a Temporal client and the object store.
 */
import { Client, Connection } from '@temporalio/client';
import { loadConfig, type Config } from '../schemas/config.ts';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store.ts';
import { readStackFile } from './stack/stack.ts';
import { CliError } from './command.ts';

export interface PipelineClient {
  config: Config;
  client: Client;
  store: ObjectStore;
  /** Web UI base URL when a local stack runs. */
  webUiUrl?: string;
  close(): Promise<void>;
}

/** Configuration: a running local stack's addresses win over defaults, explicit CALLPIPE_* still win. */
export function pipelineConfig(env: NodeJS.ProcessEnv = process.env): { config: Config; webUiUrl?: string } {
  const base = loadConfig({ env });
  const stack = readStackFile(base.stack.home);
  if (!stack) return { config: base };
  const explicit = Object.fromEntries(
    Object.entries(env).filter(([k]) => k.startsWith('CALLPIPE_') && k !== 'CALLPIPE_HOME'),
  );
  return {
    config: loadConfig({ env: { ...env, ...stack.env, ...explicit } }),
    webUiUrl: stack.addresses.webUiUrl,
  };
}

export async function connectPipeline(config?: Config, webUiUrl?: string): Promise<PipelineClient> {
  const resolved = config ? { config, webUiUrl } : pipelineConfig();
  let connection: Connection;
  try {
    connection = await Connection.connect({
      address: resolved.config.temporal.address,
      connectTimeout: 5000,
    });
  } catch (err) {
    throw new CliError(
      `cannot reach Temporal at ${resolved.config.temporal.address} (${(err as Error).message}); start the stack with \`callpipe up\``,
      1,
    );
  }
  return {
    config: resolved.config,
    client: new Client({ connection, namespace: resolved.config.temporal.namespace }),
    store: createObjectStore(resolved.config.s3),
    webUiUrl: resolved.webUiUrl,
    close: () => connection.close(),
  };
}
