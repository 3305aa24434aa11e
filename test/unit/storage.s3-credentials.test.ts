/**
 * Which credentials and region the S3 client ends up with, resolved by the real AWS SDK from real shared
 * config and credentials files (temp files, HOME pointed away from the developer's ~/.aws): callpipe's
 * configuration decides only whether static keys or a profile are passed; everything else is the SDK's
 * default provider chain, as the AWS CLI resolves it. No request is sent.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../schemas/config-loader.ts';
import { createS3Client } from '../../activities/storage/object-store.ts';

let dir: string;

/** A fresh pair of shared files per test (the SDK caches a file's content by its path). */
function sharedFiles(config: string, credentials = ''): void {
  writeFileSync(join(dir, 'config'), config);
  writeFileSync(join(dir, 'credentials'), credentials);
}

function env(vars: Record<string, string>): void {
  for (const [name, value] of Object.entries(vars)) vi.stubEnv(name, value);
}

/** Temporary credentials (keys and a session token) named after where they come from. */
function temporaryKeys(source: string) {
  return {
    accessKeyId: `ASIA${source.toUpperCase()}`,
    secretAccessKey: `${source}-secret`,
    sessionToken: `${source}-token`,
  };
}

async function resolved(options: { file?: unknown } = {}) {
  let file: string | undefined;
  if (options.file) {
    file = join(dir, 'callpipe.config.json');
    writeFileSync(file, JSON.stringify(options.file));
  }
  const client = createS3Client(loadConfig({ env: process.env, file }).s3);
  try {
    const credentials = await client.config.credentials();
    return { credentials, region: await client.config.region() };
  } finally {
    client.destroy();
  }
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-aws-'));
  for (const name of Object.keys(process.env))
    if (name.startsWith('AWS_') || name.startsWith('CALLPIPE_')) vi.stubEnv(name, undefined);
  env({
    HOME: dir,
    AWS_CONFIG_FILE: join(dir, 'config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
    // No instance metadata service here: the chain's last step would only wait for it.
    AWS_EC2_METADATA_DISABLED: 'true',
  });
  sharedFiles('');
});
afterEach(() => {
  vi.unstubAllEnvs();
  rmSync(dir, { recursive: true, force: true });
});

describe('S3 credentials and region, the AWS way', () => {
  it('uses environment keys with their session token (temporary credentials)', async () => {
    const keys = temporaryKeys('env');
    env({
      AWS_ACCESS_KEY_ID: keys.accessKeyId,
      AWS_SECRET_ACCESS_KEY: keys.secretAccessKey,
      AWS_SESSION_TOKEN: keys.sessionToken,
    });
    expect((await resolved()).credentials).toMatchObject(keys);
  });

  it('uses AWS_PROFILE from the shared files, with its region, over environment keys', async () => {
    sharedFiles(
      '[profile team]\nregion = eu-central-1\n',
      '[team]\naws_access_key_id = AKIATEAM\naws_secret_access_key = team-secret\n',
    );
    env({ AWS_PROFILE: 'team', AWS_ACCESS_KEY_ID: 'AKIAENV', AWS_SECRET_ACCESS_KEY: 'env-secret' });
    const { credentials, region } = await resolved();
    expect(credentials).toMatchObject({ accessKeyId: 'AKIATEAM', secretAccessKey: 'team-secret' });
    expect(region).toBe('eu-central-1');
  });

  it('runs a profile credential_process', async () => {
    const keys = temporaryKeys('proc');
    const script = join(dir, 'creds.mjs');
    const output = {
      Version: 1,
      AccessKeyId: keys.accessKeyId,
      SecretAccessKey: keys.secretAccessKey,
      SessionToken: keys.sessionToken,
    };
    writeFileSync(script, `console.log(${JSON.stringify(JSON.stringify(output))});\n`);
    sharedFiles(`[profile proc]\ncredential_process = ${process.execPath} ${script}\n`);
    env({ AWS_PROFILE: 'proc' });
    expect((await resolved()).credentials).toMatchObject(keys);
  });

  it('uses the default profile of the shared files when nothing names credentials', async () => {
    sharedFiles(
      '[default]\nregion = ap-northeast-1\n',
      '[default]\naws_access_key_id = AKIADEF\naws_secret_access_key = def\n',
    );
    const { credentials, region } = await resolved();
    expect(credentials.accessKeyId).toBe('AKIADEF');
    expect(region).toBe('ap-northeast-1');
  });

  it("ranks callpipe's keys over AWS_PROFILE, and AWS_PROFILE over the config file's keys", async () => {
    sharedFiles('', '[team]\naws_access_key_id = AKIATEAM\naws_secret_access_key = team-secret\n');
    env({ AWS_PROFILE: 'team' });
    const file = { s3: { accessKeyId: 'AKIAFILE', secretAccessKey: 'file-secret' } };
    expect((await resolved({ file })).credentials.accessKeyId).toBe('AKIATEAM');
    env({ CALLPIPE_S3_ACCESS_KEY_ID: 'AKIAOWN', CALLPIPE_S3_SECRET_ACCESS_KEY: 'own-secret' });
    expect((await resolved({ file })).credentials.accessKeyId).toBe('AKIAOWN');
  });

  it("ranks the config file's profile over the shared files' default profile", async () => {
    sharedFiles(
      '[profile archive]\nregion = us-west-2\n',
      '[default]\naws_access_key_id = AKIADEF\naws_secret_access_key = def\n[archive]\naws_access_key_id = AKIAARCH\naws_secret_access_key = arch\n',
    );
    const { credentials, region } = await resolved({ file: { s3: { profile: 'archive' } } });
    expect(credentials.accessKeyId).toBe('AKIAARCH');
    expect(region).toBe('us-west-2');
  });

  it('takes AWS_REGION over the profile', async () => {
    sharedFiles(
      '[default]\nregion = eu-west-3\n',
      '[default]\naws_access_key_id = AKIADEF\naws_secret_access_key = def\n',
    );
    env({ AWS_REGION: 'sa-east-1' });
    expect((await resolved()).region).toBe('sa-east-1');
  });

  it('falls back to us-east-1 when nothing names a region', async () => {
    sharedFiles('', '[default]\naws_access_key_id = AKIADEF\naws_secret_access_key = def\n');
    expect((await resolved()).region).toBe('us-east-1');
  });

  it('fails with the SDK’s own error when no source has credentials', async () => {
    await expect(resolved()).rejects.toThrow(/Could not load credentials from any providers/);
  });
});
