/**
 * Temporal connections from Temporal's environment configuration, as the `temporal` CLI reads it: the TOML
 * profile file, TEMPORAL_* variables over it, callpipe's config file between them, CALLPIPE_TEMPORAL_* over
 * everything; and the connection options Temporal's envconfig makes of the result.
 */
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../schemas/config-loader.ts';
import { describeConnection, temporalConnectionOptions } from '../../workers/temporal-connection.ts';

const dir = tempDir('callpipe-temporal-');

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const TOML = file(
  'temporal.toml',
  `[profile.default]
address = "localhost:7233"
namespace = "dev"

[profile.cloud]
address = "prod.a1b2c.tmprl.cloud:7233"
namespace = "prod.a1b2c"
api_key = "toml-api-key"

[profile.mtls]
address = "temporal.internal:7233"
namespace = "calls"
[profile.mtls.tls]
server_name = "temporal.internal"
server_ca_cert_data = "-----BEGIN CERTIFICATE-----\\nCA\\n-----END CERTIFICATE-----\\n"
client_cert_path = "${join(dir, 'client.crt')}"
client_key_path = "${join(dir, 'client.key')}"
[profile.mtls.grpc_meta]
x-tenant = "acme"
`,
);
file('client.crt', 'CLIENT CERT PEM');
file('client.key', 'CLIENT KEY PEM');

describe('Temporal configuration: profiles and ranking', () => {
  it('defaults to the local dev server, like the temporal CLI', () => {
    const { temporal } = loadConfig({ env: { TEMPORAL_CONFIG_FILE: join(dir, 'missing.toml') } });
    expect(temporal).toEqual({
      address: '127.0.0.1:7233',
      namespace: 'default',
      taskQueuePrefix: 'callpipe',
    });
    expect(temporalConnectionOptions(temporal).tls).toBeUndefined();
  });

  it('reads the default profile of the TOML file, and TEMPORAL_PROFILE picks another', () => {
    expect(loadConfig({ env: { TEMPORAL_CONFIG_FILE: TOML } }).temporal).toMatchObject({
      address: 'localhost:7233',
      namespace: 'dev',
    });
    const { temporal } = loadConfig({ env: { TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'cloud' } });
    expect(temporal).toMatchObject({ address: 'prod.a1b2c.tmprl.cloud:7233', apiKey: 'toml-api-key' });
    // An API key means TLS with the system's roots, as Temporal's SDKs do it.
    const options = temporalConnectionOptions(temporal);
    expect(options).toMatchObject({ apiKey: 'toml-api-key', tls: true });
  });

  it('turns a profile’s TLS into the SDK’s options: server name, CA, client pair, metadata', () => {
    const { temporal } = loadConfig({ env: { TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'mtls' } });
    const options = temporalConnectionOptions(temporal);
    const tls = options.tls as {
      serverNameOverride?: string;
      serverRootCACertificate?: Uint8Array;
      clientCertPair?: { crt: Uint8Array; key: Uint8Array };
    };
    expect(tls.serverNameOverride).toBe('temporal.internal');
    expect(Buffer.from(tls.serverRootCACertificate!).toString()).toContain('BEGIN CERTIFICATE');
    expect(Buffer.from(tls.clientCertPair!.crt).toString()).toBe('CLIENT CERT PEM');
    expect(Buffer.from(tls.clientCertPair!.key).toString()).toBe('CLIENT KEY PEM');
    expect(options.metadata).toEqual({ 'x-tenant': 'acme' });
  });

  it('ranks CALLPIPE_TEMPORAL_* > TEMPORAL_* > callpipe’s config file > the TOML profile', () => {
    const config = file(
      'callpipe.config.json',
      JSON.stringify({ temporal: { address: 'from-file:7233', namespace: 'file-ns' } }),
    );
    const base = { TEMPORAL_CONFIG_FILE: TOML, CALLPIPE_CONFIG: config };
    expect(loadConfig({ env: base }).temporal).toMatchObject({
      address: 'from-file:7233',
      namespace: 'file-ns',
    });
    const env = { ...base, TEMPORAL_ADDRESS: 'from-env:7233', TEMPORAL_NAMESPACE: 'env-ns' };
    expect(loadConfig({ env }).temporal).toMatchObject({ address: 'from-env:7233', namespace: 'env-ns' });
    expect(loadConfig({ env: { ...env, CALLPIPE_TEMPORAL_ADDRESS: 'own:7233' } }).temporal).toMatchObject({
      address: 'own:7233',
      namespace: 'env-ns',
    });
    // An empty TEMPORAL_* variable is unset, as in Temporal's tools.
    expect(loadConfig({ env: { ...base, TEMPORAL_ADDRESS: '' } }).temporal.address).toBe('from-file:7233');
  });
});

describe('Temporal configuration: TLS overrides, errors and descriptions', () => {
  it('takes TEMPORAL_TLS_* over the profile’s TLS, a file path replacing the profile’s PEM', () => {
    const ca = file('ca.pem', 'CA FROM FILE');
    const { temporal } = loadConfig({
      env: {
        TEMPORAL_CONFIG_FILE: TOML,
        TEMPORAL_PROFILE: 'mtls',
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: ca,
        TEMPORAL_TLS_SERVER_NAME: 'other.internal',
        TEMPORAL_API_KEY: 'env-api-key',
      },
    });
    expect(temporal.tls).toMatchObject({ serverName: 'other.internal', serverCACert: { path: ca } });
    expect(temporal.tls!.serverCACert).not.toHaveProperty('data');
    expect(temporal.apiKey).toBe('env-api-key');
    const tls = temporalConnectionOptions(temporal).tls as { serverRootCACertificate?: Uint8Array };
    expect(Buffer.from(tls.serverRootCACertificate!).toString()).toBe('CA FROM FILE');
    // TEMPORAL_TLS=false turns TLS off even with a profile that has it.
    const off = loadConfig({
      env: { TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'mtls', TEMPORAL_TLS: 'false' },
    });
    expect(temporalConnectionOptions(off.temporal).tls).toBe(false);
  });

  it('fails at start-up on a profile that is not there, or half a client pair, naming the source', () => {
    expect(() => loadConfig({ env: { TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'nope' } })).toThrow(
      /Temporal profile 'nope' in .*temporal\.toml: Profile 'nope' not found/,
    );
    expect(() => loadConfig({ env: { TEMPORAL_TLS_CLIENT_CERT_PATH: join(dir, 'client.crt') } })).toThrow(
      ConfigError,
    );
    expect(() => loadConfig({ env: { TEMPORAL_TLS_CLIENT_CERT_PATH: join(dir, 'client.crt') } })).toThrow(
      /TEMPORAL_TLS_\*: a client certificate and its key go together/,
    );
  });

  it('describes a connection without its key or certificates', () => {
    const { temporal } = loadConfig({
      env: { TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'mtls', TEMPORAL_API_KEY: 'sekr1t-key' },
    });
    const text = describeConnection(temporal);
    expect(text).toBe('temporal.internal:7233, namespace calls, TLS with a client certificate, API key');
    expect(text).not.toContain('sekr1t');
  });
});
