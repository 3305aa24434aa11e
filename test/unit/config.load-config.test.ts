import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../schemas/config-loader.ts';
import { DEFAULTS, taskQueues } from '../../schemas/config.ts';
import { ENV_VARS } from '../../schemas/config-variables.ts';
import { slowestPace } from '../../schemas/call-spec.ts';

function configFile(content: unknown): string {
  const file = join(tempDir('callpipe-config-'), 'callpipe.config.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe('loadConfig: variables and defaults', () => {
  it('describes the local emulator and Temporal on localhost when nothing is set', () => {
    const config = loadConfig({ env: {} });
    expect(config.service.baseUrl).toBe(DEFAULTS.service.baseUrl);
    expect(config.limits.maxSessionSeconds).toBe(3000);
    expect(config.stack.home).toBe('.callpipe');
    expect(taskQueues(config)).toEqual({
      workflows: 'callpipe',
      media: 'callpipe-media',
      probe: 'callpipe-probe',
      asr: 'callpipe-asr',
      nlp: 'callpipe-nlp',
    });
  });

  it('reads CALLPIPE_* variables and coerces numbers and booleans', () => {
    const config = loadConfig({
      env: {
        CALLPIPE_ASR_CONCURRENT_SESSIONS: '32',
        CALLPIPE_NLP_RPS: '2.5',
        CALLPIPE_S3_FORCE_PATH_STYLE: 'false',
        CALLPIPE_SERVICE_URL: 'https://example.test/api/dev',
      },
    });
    expect(config.limits.asrConcurrentSessions).toBe(32);
    expect(config.limits.nlpRequestsPerSecond).toBe(2.5);
    expect(config.s3.forcePathStyle).toBe(false);
    expect(config.service.baseUrl).toBe('https://example.test/api/dev');
  });

  it('CALLPIPE_SERVICE_SPEED is a number or auto; auto leaves time limits at real time', () => {
    const auto = loadConfig({ env: { CALLPIPE_SERVICE_SPEED: 'auto', CALLPIPE_SERVICE_SPEED_MAX: '12' } });
    expect(auto.service.speed).toBe('auto');
    expect(auto.service.speedMax).toBe(12);
    expect(slowestPace(auto.service.speed)).toBe(1);
    expect(slowestPace(loadConfig({ env: { CALLPIPE_SERVICE_SPEED: '20' } }).service.speed)).toBe(20);
    expect(() => loadConfig({ env: { CALLPIPE_SERVICE_SPEED: 'fast' } })).toThrow(/CALLPIPE_SERVICE_SPEED/);
    expect(() => loadConfig({ env: { CALLPIPE_SERVICE_SPEED_MAX: '0.5' } })).toThrow(
      /CALLPIPE_SERVICE_SPEED_MAX/,
    );
  });

  it('fails fast naming the variable, without echoing its value', () => {
    expect(() => loadConfig({ env: { CALLPIPE_ASR_CONCURRENT_SESSIONS: 'many' } })).toThrow(
      /CALLPIPE_ASR_CONCURRENT_SESSIONS/,
    );
    expect(() => loadConfig({ env: { CALLPIPE_DOMAIN_ID: 'short' } })).toThrow(
      /CALLPIPE_DOMAIN_ID.*8 alphanumeric/,
    );
    try {
      loadConfig({ env: { CALLPIPE_SERVICE_URL: 'not a url s3cr3t' } });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain('CALLPIPE_SERVICE_URL');
      expect((err as Error).message).not.toContain('s3cr3t');
    }
    expect(() => loadConfig({ env: { CALLPIPE_MAX_SESSION_SECONDS: '3001' } })).toThrow(
      /CALLPIPE_MAX_SESSION_SECONDS/,
    );
  });
});

describe('loadConfig: AWS variables', () => {
  it('honours the standard AWS variables beneath CALLPIPE_* ones and over the config file', () => {
    const file = configFile({ s3: { region: 'from-file', endpoint: 'http://file.test:9000' } });
    const env = {
      CALLPIPE_CONFIG: file,
      AWS_REGION: 'eu-west-1',
      AWS_DEFAULT_REGION: 'us-west-2',
      AWS_ENDPOINT_URL: 'http://all-services.test:9000',
      AWS_ENDPOINT_URL_S3: 'http://minio.test:9000',
    };
    const config = loadConfig({ env });
    expect(config.s3.region).toBe('eu-west-1');
    expect(config.s3.endpoint).toBe('http://minio.test:9000');
    expect(loadConfig({ env: { ...env, CALLPIPE_S3_REGION: 'ap-northeast-1' } }).s3.region).toBe(
      'ap-northeast-1',
    );
    const { AWS_REGION: _r, AWS_ENDPOINT_URL_S3: _e, ...fallbacks } = env;
    expect(loadConfig({ env: fallbacks }).s3).toMatchObject({
      region: 'us-west-2',
      endpoint: 'http://all-services.test:9000',
    });
    // An empty AWS_* variable is unset, as the SDK reads it: the file's value shows through.
    expect(loadConfig({ env: { CALLPIPE_CONFIG: file, AWS_REGION: '' } }).s3.region).toBe('from-file');
    expect(loadConfig({ env: { ...env, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' } }).s3.endpoint).toBe(
      'http://file.test:9000',
    );
  });

  it('leaves S3 to AWS defaults when nothing is set: no endpoint, no keys, virtual-host style', () => {
    const { s3 } = loadConfig({ env: {} });
    expect(s3).toMatchObject({ bucket: 'callpipe', forcePathStyle: false });
    for (const key of ['endpoint', 'region', 'accessKeyId', 'secretAccessKey', 'sessionToken', 'profile'])
      expect(s3, key).not.toHaveProperty(key, expect.anything());
    // An endpoint means an S3-compatible server: path style, unless said otherwise.
    expect(loadConfig({ env: { CALLPIPE_S3_ENDPOINT: 'http://127.0.0.1:8333' } }).s3.forcePathStyle).toBe(
      true,
    );
    expect(
      loadConfig({
        env: { CALLPIPE_S3_ENDPOINT: 'http://127.0.0.1:8333', CALLPIPE_S3_FORCE_PATH_STYLE: 'false' },
      }).s3.forcePathStyle,
    ).toBe(false);
  });
});

describe('loadConfig: S3 credentials', () => {
  it('takes S3 credentials as one group from the strongest source that names any of them', () => {
    const keys = { accessKeyId: 'FILEKEY', secretAccessKey: 'file-secret', sessionToken: 'file-token' };
    const file = configFile({ s3: keys });
    expect(loadConfig({ env: { CALLPIPE_CONFIG: file } }).s3).toMatchObject(keys);
    // AWS credential variables outrank the file: the SDK's chain reads them, so callpipe passes no keys.
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_PROFILE', 'AWS_SESSION_TOKEN']) {
      const { s3 } = loadConfig({ env: { CALLPIPE_CONFIG: file, [name]: 'x' } });
      expect(s3.accessKeyId, name).toBeUndefined();
      expect(s3.sessionToken, name).toBeUndefined();
    }
    // CALLPIPE_* keys outrank both, and never pair with the file's token.
    const own = loadConfig({
      env: {
        CALLPIPE_CONFIG: file,
        AWS_PROFILE: 'prod',
        CALLPIPE_S3_ACCESS_KEY_ID: 'OWNKEY',
        CALLPIPE_S3_SECRET_ACCESS_KEY: 'own-secret',
      },
    }).s3;
    expect(own).toMatchObject({ accessKeyId: 'OWNKEY', secretAccessKey: 'own-secret' });
    expect(own.sessionToken).toBeUndefined();
    // An empty CALLPIPE_* variable clears the file's keys: the SDK's chain decides.
    const cleared = loadConfig({ env: { CALLPIPE_CONFIG: file, CALLPIPE_S3_ACCESS_KEY_ID: '' } }).s3;
    expect(cleared.accessKeyId).toBeUndefined();
    expect(cleared.secretAccessKey).toBeUndefined();
    // A profile from callpipe's sources is passed on; from AWS_PROFILE the SDK reads it itself.
    expect(loadConfig({ env: { CALLPIPE_S3_PROFILE: 'archive' } }).s3.profile).toBe('archive');
    expect(loadConfig({ env: { CALLPIPE_CONFIG: configFile({ s3: { profile: 'p' } }) } }).s3.profile).toBe(
      'p',
    );
  });

  it('refuses half a credential, naming the variable and never the value', () => {
    expect(() => loadConfig({ env: { CALLPIPE_S3_ACCESS_KEY_ID: 'AKIAHALF' } })).toThrow(
      /CALLPIPE_S3_SECRET_ACCESS_KEY: an access key id and a secret access key go together/,
    );
    expect(() => loadConfig({ env: { CALLPIPE_S3_SESSION_TOKEN: 'tok3n' } })).toThrow(
      /CALLPIPE_S3_SESSION_TOKEN: a session token needs the keys/,
    );
    try {
      loadConfig({
        env: {
          CALLPIPE_S3_ACCESS_KEY_ID: 'AKIA',
          CALLPIPE_S3_SECRET_ACCESS_KEY: 's3cr3t',
          CALLPIPE_S3_PROFILE: 'p',
        },
      });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toMatch(/CALLPIPE_S3_PROFILE: set either keys or a profile/);
      expect((err as Error).message).not.toContain('s3cr3t');
    }
  });
});

describe('loadConfig: clearing defaults and the config file', () => {
  it('clears a default with an empty variable or a null in the file; a required value cannot be cleared', () => {
    expect(
      loadConfig({ env: { CALLPIPE_S3_ENDPOINT: 'http://x.test:1', CALLPIPE_ASR_URL: '' } }).service
        .asrBaseUrl,
    ).toBeUndefined();
    const file = configFile({
      s3: { endpoint: 'http://file.test:9000' },
      service: { asrBaseUrl: 'http://asr.test' },
    });
    expect(
      loadConfig({ env: { CALLPIPE_CONFIG: file, CALLPIPE_S3_ENDPOINT: '' } }).s3.endpoint,
    ).toBeUndefined();
    expect(
      loadConfig({ env: { CALLPIPE_CONFIG: configFile({ service: { asrBaseUrl: null } }) } }).service
        .asrBaseUrl,
    ).toBeUndefined();
    expect(() => loadConfig({ env: { CALLPIPE_S3_BUCKET: '' } })).toThrow(
      /CALLPIPE_S3_BUCKET: required, and it is empty or unset/,
    );
  });

  it('reads a config file, with variables winning over it, and names the file on errors', () => {
    const dir = tempDir('callpipe-config-');
    const file = join(dir, 'callpipe.config.json');
    writeFileSync(file, JSON.stringify({ limits: { nlpConcurrency: 3 }, s3: { bucket: 'from-file' } }));
    const config = loadConfig({ env: { CALLPIPE_CONFIG: file, CALLPIPE_S3_BUCKET: 'from-env' } });
    expect(config.limits.nlpConcurrency).toBe(3);
    expect(config.s3.bucket).toBe('from-env');
    writeFileSync(file, JSON.stringify({ limits: { nlpConcurrency: -1 } }));
    expect(() => loadConfig({ env: { CALLPIPE_CONFIG: file } })).toThrow(
      /callpipe\.config\.json: limits\.nlpConcurrency/,
    );
    writeFileSync(file, '{ not json');
    expect(() => loadConfig({ env: { CALLPIPE_CONFIG: file } })).toThrow(
      /config file .*callpipe\.config\.json/,
    );
  });

  it('documents every variable in .env.example', async () => {
    const { readFileSync } = await import('node:fs');
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    for (const name of Object.keys(ENV_VARS)) expect(example, name).toContain(name);
  });
});
