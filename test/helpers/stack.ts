/** What integration tests get from the shared test stack: config, a Temporal client, the object store. */
import { inject } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { loadConfig, type Config } from '../../schemas/config.ts';
import { createObjectStore, type ObjectStore } from '../../activities/storage/object-store.ts';

export function stackConfig(): Config {
  return loadConfig({ env: inject('stackEnv') });
}

export async function temporalClient(
  config = stackConfig(),
): Promise<{ client: Client; close: () => Promise<void> }> {
  const connection = await Connection.connect({ address: config.temporal.address });
  return {
    client: new Client({ connection, namespace: config.temporal.namespace }),
    close: () => connection.close(),
  };
}

export function objectStore(config = stackConfig()): ObjectStore {
  return createObjectStore(config.s3);
}
