/**
 * Child processes get only the environment they need: with the service's client secret and S3 keys set
 * in this process, ffmpeg and ffprobe started by the media module, and the local stack's servers, hold
 * none of them (read from the child's own /proc/<pid>/environ), while what they need to run is there.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { childEnv, SECRET_VARIABLES } from '../../schemas/child-env.ts';
import { runFfmpeg, runFfprobe, spawnFfmpeg } from '../../activities/media/ffmpeg.ts';
import { ManagedProcess } from '../../cli/stack/process.ts';
import { serverEnv, workersEnv } from '../../cli/stack/stack.ts';

const dir = mkdtempSync(join(tmpdir(), 'callpipe-child-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRETS: Record<string, string> = {
  CALLPIPE_CLIENT_SECRET: 'client-secret-f00d',
  CALLPIPE_S3_SECRET_ACCESS_KEY: 's3-secret-beef',
  CALLPIPE_S3_SESSION_TOKEN: 's3-token-cafe',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-d00d',
  AWS_SESSION_TOKEN: 'aws-token-feed',
  TEMPORAL_API_KEY: 'temporal-key-face',
};
const saved: Record<string, string | undefined> = {};
const tools = ['CALLPIPE_FFMPEG', 'CALLPIPE_FFPROBE'];
beforeEach(() => {
  for (const name of [...Object.keys(SECRETS), ...tools]) saved[name] = process.env[name];
  Object.assign(process.env, SECRETS);
});
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** A stand-in for a tool that copies its own /proc/<pid>/environ to a file, then exits 0. */
/**
 * A program that copies its environment to a file, then ends, or with `stayUp` says `ready` and stays
 * up until stopped, as a server does (one that ended at once could end before its start was checked).
 */
function environDumper(
  name: string,
  stayUp = false,
): { binary: string; environ: () => Record<string, string> } {
  const out = join(dir, `${name}.environ`);
  const binary = join(dir, name);
  const then = stayUp ? 'echo ready\nexec sleep 600\n' : '';
  writeFileSync(binary, `#!/bin/sh\ncat /proc/$$/environ > '${out}'\n${then}`);
  chmodSync(binary, 0o755);
  return {
    binary,
    environ: () =>
      Object.fromEntries(
        readFileSync(out, 'utf8')
          .split('\0')
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      ),
  };
}

function expectNoSecret(environ: Record<string, string>): void {
  for (const [name, value] of Object.entries(SECRETS)) {
    expect(environ[name], name).toBeUndefined();
    expect(Object.values(environ)).not.toContain(value);
  }
}

describe('childEnv', () => {
  it('copies the base and the groups asked for, never a secret, and sets extra as given', () => {
    const parent = {
      PATH: '/bin',
      LC_ALL: 'C.UTF-8',
      HOME: '/home/u',
      CALLPIPE_MODEL: 'm',
      NODE_OPTIONS: '--x',
      DISPLAY: ':0',
      UNRELATED: 'x',
      ...SECRETS,
    };
    expect(childEnv({ parent })).toEqual({ PATH: '/bin', LC_ALL: 'C.UTF-8', HOME: '/home/u' });
    const node = childEnv({ parent, groups: ['node', 'callpipe'], extra: { CALLPIPE_CLIENT_SECRET: 's' } });
    expect(node).toEqual({
      PATH: '/bin',
      LC_ALL: 'C.UTF-8',
      HOME: '/home/u',
      CALLPIPE_MODEL: 'm',
      NODE_OPTIONS: '--x',
      CALLPIPE_CLIENT_SECRET: 's',
    });
    expect(SECRET_VARIABLES).toEqual(expect.arrayContaining(Object.keys(SECRETS)));
  });
});

describe('children started by callpipe hold no secret', () => {
  it('ffmpeg and ffprobe, run and streamed by the media module', async () => {
    const ffmpeg = environDumper('ffmpeg');
    const ffprobe = environDumper('ffprobe');
    process.env.CALLPIPE_FFMPEG = ffmpeg.binary;
    process.env.CALLPIPE_FFPROBE = ffprobe.binary;

    await runFfmpeg(['-version']);
    expectNoSecret(ffmpeg.environ());
    expect(ffmpeg.environ().PATH).toBe(process.env.PATH);

    await runFfprobe(['-version']);
    expectNoSecret(ffprobe.environ());

    rmSync(join(dir, 'ffmpeg.environ'));
    const streamed = spawnFfmpeg(['-version']);
    streamed.stdout.resume();
    await streamed.done;
    expectNoSecret(ffmpeg.environ());
  });

  it("the stack's servers hold none; its workers hold only the secrets the stack gives them", async () => {
    const server = environDumper('server', true);
    const managed = new ManagedProcess({
      name: 'server',
      command: server.binary,
      args: [],
      env: serverEnv(),
      logFile: join(dir, 'server.log'),
      readyWhenLogged: 'ready',
    });
    await managed.start();
    await managed.stop();
    expectNoSecret(server.environ());

    const workers = workersEnv({ CALLPIPE_CLIENT_SECRET: 'given', CALLPIPE_MODEL: 'm' });
    expect(workers.CALLPIPE_CLIENT_SECRET).toBe('given');
    expect(workers.CALLPIPE_S3_SECRET_ACCESS_KEY).toBeUndefined();
    expect(workers.AWS_SECRET_ACCESS_KEY).toBeUndefined();
    expect(workers.TEMPORAL_API_KEY).toBeUndefined();
  });
});
