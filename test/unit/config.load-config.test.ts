import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, DEFAULTS, ENV_VARS, loadConfig, taskQueues } from '../../schemas/config.ts';

describe('loadConfig', () => {
  it('describes the local stack when nothing is set', () => {
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

  it('honours the standard AWS variables beneath CALLPIPE_* ones', () => {
    const env = {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_ENDPOINT_URL_S3: 'http://minio.test:9000',
    };
    const config = loadConfig({ env });
    expect(config.s3.region).toBe('eu-west-1');
    expect(config.s3.accessKeyId).toBe('AKIAEXAMPLE');
    expect(config.s3.endpoint).toBe('http://minio.test:9000');
    expect(loadConfig({ env: { ...env, CALLPIPE_S3_REGION: 'ap-northeast-1' } }).s3.region).toBe(
      'ap-northeast-1',
    );
  });

  it('reads a config file, with variables winning over it, and names the file on errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'callpipe-config-'));
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
