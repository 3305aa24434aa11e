/** What integration tests get from the shared test stack: config, a Temporal client, the object store. */
import { inject } from 'vitest';
import type { Client } from '@temporalio/client';
import { connectClient, temporalClient as clientOn } from '../../workers/temporal-connection.ts';
import { loadConfig } from '../../schemas/config-loader.ts';
import { type Config } from '../../schemas/config.ts';
import { createObjectStore, type ObjectStore } from '../../activities/storage/object-store.ts';

export function stackConfig(): Config {
  return loadConfig({ env: inject('stackEnv') });
}

export async function temporalClient(
  config = stackConfig(),
): Promise<{ client: Client; close: () => Promise<void> }> {
  const connection = await connectClient(config.temporal);
  return {
    client: clientOn(connection, config.temporal),
    close: () => connection.close(),
  };
}

export function objectStore(config = stackConfig()): ObjectStore {
  return createObjectStore(config.s3);
}
