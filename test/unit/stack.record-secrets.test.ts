/**
 * No secret in any file under CALLPIPE_HOME: the stack record keeps where each secret comes from, never
 * its value, and a command that reads the record takes the secret from its own configuration, as `up`
 * did. The home is private to the user (0700) and the record too (0600).
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stackFile, writeStackRecord, recordProcess } from '../../cli/stack/stack-record.ts';
import { stackRecordOf, privateHome, isolatedStackConfig, stackEnv } from '../../cli/stack/stack.ts';
import { pipelineConfig } from '../../cli/stack-client.ts';
import { LOCAL_S3_ACCESS_KEY, LOCAL_S3_SECRET_KEY } from '../../schemas/config.ts';
import { loadConfig } from '../../schemas/config-loader.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'callpipe-record-'));
  dirs.push(dir);
  return dir;
}

const CLIENT_SECRET = 'real-client-secret-7f3a9c';

describe('the stack record', () => {
  it('holds no secret, only where it comes from; a command reads the secret from its own environment', () => {
    const home = tempDir();
    const config = isolatedStackConfig(home, 1);
    // As the stack runs: its S3 server's local keys, the client secret of the configuration.
    const env = stackEnv({
      ...config,
      service: { ...config.service, clientSecret: CLIENT_SECRET },
      s3: {
        ...config.s3,
        endpoint: 'http://127.0.0.1:3',
        accessKeyId: LOCAL_S3_ACCESS_KEY,
        secretAccessKey: LOCAL_S3_SECRET_KEY,
      },
    });
    const addresses = {
      home,
      temporalAddress: '127.0.0.1:1',
      namespace: 'default',
      webUiUrl: 'http://127.0.0.1:2',
      s3Endpoint: 'http://127.0.0.1:3',
      bucket: 'callpipe',
    };
    writeStackRecord(home, {
      ...stackRecordOf(env),
      pid: process.pid,
      processes: [recordProcess('self', process.pid)],
      addresses,
    });

    const text = readFileSync(stackFile(home), 'utf8');
    expect(text).not.toContain(CLIENT_SECRET);
    expect(text).not.toContain(LOCAL_S3_SECRET_KEY);
    expect(statSync(stackFile(home)).mode & 0o777).toBe(0o600);

    const { config: seen } = pipelineConfig({ CALLPIPE_HOME: home, CALLPIPE_CLIENT_SECRET: CLIENT_SECRET });
    expect(seen.service.clientSecret).toBe(CLIENT_SECRET);
    expect(seen.s3.endpoint).toBe('http://127.0.0.1:3');
    expect(seen.s3.accessKeyId).toBe(LOCAL_S3_ACCESS_KEY);
    expect(seen.s3.secretAccessKey).toBe(LOCAL_S3_SECRET_KEY);
    // Without the variable, the command's own configuration decides, never a value kept on disk.
    expect(pipelineConfig({ CALLPIPE_HOME: home }).config.service.clientSecret).toBe(
      loadConfig({ env: {} }).service.clientSecret,
    );
  });

  it('makes CALLPIPE_HOME private to the user, a new one and one made before', () => {
    const fresh = join(tempDir(), 'home');
    privateHome(fresh);
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    expect(statSync(join(fresh, 'logs')).mode & 0o777).toBe(0o700);

    const old = join(tempDir(), 'old');
    mkdirSync(join(old, 'logs'), { recursive: true });
    chmodSync(old, 0o755);
    privateHome(old);
    expect(statSync(old).mode & 0o777).toBe(0o700);
  });
});
