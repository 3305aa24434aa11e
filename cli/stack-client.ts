/**
 * How commands reach the pipeline: the configuration of a running local stack (found through
 * CALLPIPE_HOME) when there is one, else the configuration as set; a Temporal client and the object store.
 */
import type { Client, Connection } from '@temporalio/client';
import { connectClient, describeConnection, temporalClient } from '../workers/temporal-connection.ts';
import { loadConfig } from '../schemas/config-loader.ts';
import { type Config } from '../schemas/config.ts';
import { createObjectStore, type ObjectStore } from '../activities/storage/object-store.ts';
import { readStackFile, recordedStackEnv } from './stack/stack-record.ts';
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
  // The stack's Temporal is a plain local dev server: a TLS client certificate or an API key meant for a
  // cluster (TEMPORAL_* variables, a profile) would only break the connection to it.
  const local = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('TEMPORAL_')));
  return {
    // The record holds no secret: the stack's local ones are filled in, the others are this process's own.
    config: loadConfig({ env: { ...local, ...recordedStackEnv(stack), ...explicit } }),
    webUiUrl: stack.addresses.webUiUrl,
  };
}

export async function connectPipeline(config?: Config, webUiUrl?: string): Promise<PipelineClient> {
  const resolved = config ? { config, webUiUrl } : pipelineConfig();
  let connection: Connection;
  try {
    connection = await connectClient(resolved.config.temporal, { connectTimeout: 5000 });
  } catch (err) {
    throw new CliError(
      `cannot reach Temporal at ${describeConnection(resolved.config.temporal)} (${(err as Error).message}); start the local stack with \`callpipe up\`, or see docs/configuration.md for TEMPORAL_* and profiles`,
      1,
    );
  }
  return {
    config: resolved.config,
    client: temporalClient(connection, resolved.config.temporal),
    store: createObjectStore(resolved.config.s3),
    webUiUrl: resolved.webUiUrl,
    close: () => connection.close(),
  };
}
