/**
 * Leaks of secrets and trust by name, on the real stack (issue 26):
 * - ffmpeg and ffprobe, run by workers that hold the stack's client secret and S3 key in their
 *   environment, get neither (each child's own /proc/<pid>/environ, copied by a wrapper that then runs the
 *   real tool on the real call);
 * - a file planted at the name the source cache would give a recording's copy is not used: the call's
 *   transcript is its own, not the planted recording's;
 * - `callpipe up --no-emulator` with a real client secret keeps it out of every file under CALLPIPE_HOME,
 *   which is private to the user (0700, its files 0600);
 * - the same `up` says at once when its S3 server is killed (which part, the signal, its log) and starts
 *   it again (by its output, not by timing).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { resolveSource, submitRecording } from '../../cli/submit.ts';
import { mediaTools } from '../../schemas/process-settings.ts';
import { slowestPace } from '../../schemas/call-spec.ts';
import { taskQueues } from '../../schemas/config.ts';
import { sourceCacheKey } from '../../activities/storage/source-cache.ts';
import {
  ANY_SPEAKER,
  compareTranscript,
  expectedUtterances,
  inProcessWorkers,
  makeCall,
  uniquePrefix,
  withPrefix,
} from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { upProcess, upReady } from '../helpers/up-process.ts';
import { runId } from '../helpers/run-id.ts';

const dir = mkdtempSync(join(tmpdir(), 'callpipe-hostile-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Sets variables of this process for one test, and puts them back. */
function setEnv(vars: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

/** A wrapper for `real` that copies its own environment (/proc/$$/environ) into `envDir`, then runs it. */
function recordingWrapper(tool: string, real: string, envDir: string): string {
  const path = join(dir, `${tool}-wrapper`);
  writeFileSync(path, `#!/bin/sh\ncat /proc/$$/environ > '${envDir}/${tool}.'$$\nexec '${real}' "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

describe('a real call: its media tools hold no secret, and its source copy is its own', () => {
  let pc: PipelineClient;
  beforeAll(async () => {
    pc = await connectPipeline(stackConfig());
  });
  afterAll(async () => {
    await pc?.close();
  });

  it('ffmpeg and ffprobe get no secret; a planted copy is discarded and the transcript is the call’s', async () => {
    const config = withPrefix(stackConfig(), uniquePrefix('secrets'));
    const envDir = join(dir, 'environ');
    mkdirSync(envDir);
    const real = mediaTools();
    const cacheHome = join(dir, 'worker-home');
    // As in the stack's workers process: its secrets in its environment, its cache under its home.
    const restore = setEnv({
      CALLPIPE_CLIENT_SECRET: config.service.clientSecret,
      CALLPIPE_S3_SECRET_ACCESS_KEY: config.s3.secretAccessKey!,
      CALLPIPE_HOME: cacheHome,
      CALLPIPE_FFMPEG: recordingWrapper('ffmpeg', real.ffmpeg, envDir),
      CALLPIPE_FFPROBE: recordingWrapper('ffprobe', real.ffprobe, envDir),
    });
    const workers = await inProcessWorkers(config);
    const planted: string[] = [];
    try {
      const own = await makeCall(dir, 'own.wav', { durationSeconds: 8, seed: 11 });
      const other = await makeCall(dir, 'other.wav', { durationSeconds: 8, seed: 12 });
      const source = await resolveSource(own.path, pc.store, pc.config);
      // Another recording's bytes, where the cache would put this one's copy, and at that name in the
      // folder every stack of the host once shared (where anyone could write).
      for (const cache of [join(cacheHome, 'sources'), join(tmpdir(), 'callpipe-sources')]) {
        mkdirSync(cache, { recursive: true });
        planted.push(join(cache, sourceCacheKey(source)));
        writeFileSync(planted.at(-1)!, readFileSync(other.path));
      }

      const submitted = await submitRecording(pc, source, {
        output: { bucket: pc.store.bucket, prefix: `hostile-secrets-${runId()}/` },
        redo: true,
        extra: { queues: taskQueues(config), pacingSpeed: slowestPace(pc.config.service.speed) },
      });
      const result = await submitted.handle.result();
      expect(result.status, result.reason).toBe('done');
      const doc = JSON.parse(await pc.store.getText(result.resultKey!)) as {
        utterances: { speaker: string; start: number; text: string }[];
      };
      const { missing } = compareTranscript(doc.utterances, expectedUtterances(own.script, [ANY_SPEAKER]));
      expect(missing).toEqual([]);
    } finally {
      await workers.stop();
      restore();
      for (const path of planted) rmSync(path, { force: true });
    }

    const dumps = readdirSync(envDir);
    expect(dumps.some((f) => f.startsWith('ffprobe.'))).toBe(true);
    expect(dumps.some((f) => f.startsWith('ffmpeg.'))).toBe(true);
    for (const f of dumps) {
      const environ = readFileSync(join(envDir, f), 'utf8');
      expect(environ, f).not.toContain(config.service.clientSecret);
      expect(environ, f).not.toContain(config.s3.secretAccessKey!);
      expect(environ, f).not.toMatch(/(^|\0)CALLPIPE_(CLIENT_SECRET|S3_SECRET_ACCESS_KEY)=/);
    }
  });
});

/** Every file and folder under `root`, with its permission bits. */
function modesUnder(root: string): { path: string; dir: boolean; mode: number }[] {
  const out: { path: string; dir: boolean; mode: number }[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (!entry.isFile() && !entry.isDirectory()) continue;
    // A server's short-lived file (SQLite's journal) may be gone since the listing.
    const info = statSync(path, { throwIfNoEntry: false });
    if (info) out.push({ path, dir: entry.isDirectory(), mode: info.mode & 0o777 });
  }
  return out;
}

/** Waits for `text` in what `up` wrote to stderr, as long as it runs (a liveness bound, not a speed). */
async function saidByUp(stderr: () => string, text: string, patienceMs = 240_000): Promise<string> {
  const deadline = Date.now() + patienceMs;
  while (!stderr().includes(text)) {
    if (Date.now() > deadline) throw new Error(`callpipe up never said '${text}'; it said:\n${stderr()}`);
    await sleep(200);
  }
  return stderr();
}

describe('callpipe up --no-emulator with a real client secret', () => {
  it('writes no secret under its private home, and says at once when its S3 server dies', async () => {
    const home = join(dir, 'up-home');
    const secret = `real-client-secret-${randomUUID()}`;
    const up = upProcess(home, { CALLPIPE_CLIENT_SECRET: secret }, ['--no-emulator', '--no-workers']);
    try {
      const ready = upReady(up, home);
      const addresses = await ready.addresses;

      const record = readFileSync(join(home, 'stack.json'), 'utf8');
      expect(record).not.toContain(secret);
      expect(statSync(home).mode & 0o777).toBe(0o700);
      const entries = modesUnder(home);
      expect(entries.length).toBeGreaterThan(3);
      for (const e of entries) {
        if (!e.dir && existsSync(e.path)) expect(readFileSync(e.path).includes(secret), e.path).toBe(false);
        expect({ path: e.path, open: e.mode & 0o077 }).toEqual({ path: e.path, open: 0 });
      }

      const s3 = (JSON.parse(record) as { processes: { name: string; pid: number }[] }).processes.find(
        (p) => p.name === 's3',
      )!;
      process.kill(s3.pid, 'SIGKILL');
      const said = await saidByUp(ready.stderr, 'callpipe up: s3 is running again');
      expect(said).toContain(`callpipe up: s3 (pid ${s3.pid}) was killed by SIGKILL`);
      expect(said).toContain(join(home, 'logs', 's3.log'));
      expect(said).toContain('restarting s3');
      expect((await fetch(addresses.s3Endpoint!)).status).toBeGreaterThan(0);

      const exited = new Promise<number | null>((resolve) => up.once('exit', (code) => resolve(code)));
      up.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (up.exitCode === null && !up.signalCode) up.kill('SIGKILL');
    }
  });
});
