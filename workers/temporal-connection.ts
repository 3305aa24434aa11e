/**
 * The one way callpipe connects to Temporal (workers, the `callpipe` command, tests, benchmarks): the
 * address, namespace, TLS (server CA and name, client certificate), API key and gRPC metadata resolved by
 * schemas/config.ts from Temporal's environment configuration, turned into connection options by
 * Temporal's own `@temporalio/envconfig`, so a profile means here what it means to the `temporal` CLI.
 */
import { writeFileSync } from 'node:fs';
import { clientConfigToToml, toClientOptions } from '@temporalio/envconfig';
import { Client, Connection, type ConnectionLike } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import type { TemporalConfig } from '../schemas/config.ts';
import { payloadDataConverter, payloadKeysOf } from './payload-codec.ts';

/** Connection options of `config` (certificate and key files are read now). */
export function temporalConnectionOptions(config: TemporalConfig): NativeConnectionOptions {
  const { connectionOptions } = toClientOptions({
    address: config.address,
    namespace: config.namespace,
    apiKey: config.apiKey,
    tls: config.tls,
    grpcMeta: config.grpcMeta,
  });
  return { ...connectionOptions, address: config.address };
}

/** A workers' connection (the SDK's native one). */
export function connectWorkers(config: TemporalConfig): Promise<NativeConnection> {
  return NativeConnection.connect(temporalConnectionOptions(config));
}

/** A client connection (starting, querying, scheduling workflows). */
export function connectClient(
  config: TemporalConfig,
  options: { connectTimeout?: number } = {},
): Promise<Connection> {
  return Connection.connect({ ...temporalConnectionOptions(config), ...options });
}

/**
 * The data converter of every client and worker: payloads encrypted with the configured payload keys
 * (workers/payload-codec.ts). Throws PayloadKeyError, naming the source, on bad key material.
 */
export function temporalDataConverter(config: TemporalConfig): DataConverter {
  return payloadDataConverter(payloadKeysOf(config));
}

/** A client on `connection` with `config`'s namespace and data converter: the one way to make one. */
export function temporalClient(connection: ConnectionLike, config: TemporalConfig): Client {
  return new Client({
    connection,
    namespace: config.namespace,
    dataConverter: temporalDataConverter(config),
  });
}

/** How a connection is secured, for messages: never the key or a certificate's content. */
export function describeConnection(config: TemporalConfig): string {
  const tls = config.tls?.disabled ? false : !!config.tls || !!config.apiKey;
  const parts = [`${config.address}, namespace ${config.namespace}`];
  if (tls) parts.push(config.tls?.clientCert ? 'TLS with a client certificate' : 'TLS');
  if (config.apiKey) parts.push('API key');
  return parts.join(', ');
}

/**
 * Writes a Temporal TOML config file whose `default` profile is `config`'s address and namespace: the local
 * stack's, so its processes (and `temporal --config-file …`) never pick up a profile meant for a cluster.
 */
export function writeTemporalProfile(
  path: string,
  config: Pick<TemporalConfig, 'address' | 'namespace'>,
): void {
  writeFileSync(
    path,
    clientConfigToToml({ profiles: { default: { address: config.address, namespace: config.namespace } } }),
  );
}
