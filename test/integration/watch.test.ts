/**
 * callpipe watch on the real stack (Temporal, the S3 server, the emulator at speed 100, real ffmpeg):
 * recordings uploaded while a watch runs are each processed once, one of them uploaded slowly in parts;
 * the watcher's worker killed and restarted, and the watch stopped and started again after new uploads,
 * miss and double nothing. With `--sqs`, a real SQS-compatible server (moto, pinned in the tools' venv)
 * carries S3 event notifications in AWS's format. A watched call gets a latency plan: short sessions cut
 * in silence while the account's sessions are free, every phrase still exact.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { freePort } from '../../cli/stack/ports.ts';
import { outputLocation } from '../../cli/submit.ts';
import { watchIdOf } from '../../cli/commands/watch.ts';
import { callIdOf, callIdRuleOf } from '../../activities/storage/call-id.ts';
import { createS3Client } from '../../activities/storage/object-store.ts';
import { callOutputKeys } from '../../schemas/call-keys.ts';
import { venvPython } from '../../cli/tools/provision.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import type { WatchStatus } from '../../schemas/watch.ts';
import { processRecording } from '../../workflows/process-recording.ts';
import { callpipe as run } from '../helpers/cli.ts';
import {
  childWorkers,
  compareTranscript,
  expectedUtterances,
  makeCall,
  uniquePrefix,
  withPrefix,
} from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';
import { recordHistory } from '../helpers/histories.ts';
import { until } from '../helpers/until.ts';

const run8 = runId();
let dir: string;
let pc: PipelineClient;
let output: OutputLocation;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-watch-'));
  pc = await connectPipeline(stackConfig());
  output = outputLocation(undefined, pc.config);
});

afterAll(async () => {
  await pc?.close();
  rmSync(dir, { recursive: true, force: true });
});

const callIdOfKey = (key: string) => callIdOf({ bucket: pc.store.bucket, key }, callIdRuleOf(pc.config));

/** processRecording executions of a call (every version, every run). */
async function executionsOf(key: string): Promise<number> {
  const { count } = await pc.client.workflow.count(
    `WorkflowType = '${processRecording.name}' AND CallpipeCallId = "${callIdOfKey(key)}"`,
  );
  return count;
}

async function done(key: string): Promise<boolean> {
  return pc.store.exists(callOutputKeys(output, callIdOfKey(key)).result);
}

/** Each key's result.json exists and exactly one processRecording ran for it. */
async function expectEachOnce(keys: string[]): Promise<void> {
  await until(
    'every recording done',
    async () => (await Promise.all(keys.map(done))).every(Boolean),
    (v) => v,
  );
  // Visibility lags a little behind the executions themselves.
  const counts = await until(
    'one execution per call',
    () => Promise.all(keys.map(executionsOf)),
    (v) => v.every((n) => n >= 1),
  );
  expect(counts).toEqual(keys.map(() => 1));
}

async function upload(key: string, seed: number): Promise<void> {
  const call = await makeCall(dir, `${seed}.wav`, { durationSeconds: 4, seed, sampleRate: 8000 });
  await pc.store.putFile(key, call.path);
}

/** A recording uploaded in two parts a few seconds apart (S3's minimum part is 5 MiB). */
async function uploadSlowlyInParts(key: string): Promise<void> {
  const call = await makeCall(dir, 'parts.wav', {
    durationSeconds: 30,
    stereo: true,
    sampleRate: 48000,
    seed: 9,
  });
  const body = readFileSync(call.path);
  const cut = 5 * 1024 * 1024;
  expect(body.length).toBeGreaterThan(cut);
  const s3 = createS3Client(pc.config.s3);
  const Bucket = pc.store.bucket;
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: key }));
  const parts = [];
  for (const [n, chunk] of [body.subarray(0, cut), body.subarray(cut)].entries()) {
    const { ETag } = await s3.send(
      new UploadPartCommand({ Bucket, Key: key, UploadId, PartNumber: n + 1, Body: chunk }),
    );
    parts.push({ ETag, PartNumber: n + 1 });
    // Mid-upload the object does not exist yet: a watch polling meanwhile must not take anything.
    if (n === 0) await new Promise((r) => setTimeout(r, 4000));
  }
  await s3.send(
    new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }),
  );
  s3.destroy();
}

describe('callpipe watch: uploads', () => {
  it('processes each upload once, across a killed worker and a stop and restart', async () => {
    const queuePrefix = uniquePrefix('watch');
    const config = withPrefix(stackConfig(), queuePrefix);
    const env = { ...inject('stackEnv'), CALLPIPE_TASK_QUEUE_PREFIX: queuePrefix };
    const callpipe = (...args: string[]) => run(args, env);
    const prefix = `incoming/watch-${run8}/`;
    const url = `s3://${pc.store.bucket}/${prefix}`;
    const key = (name: string) => `${prefix}${name}.wav`;
    const watchArgs = [url, '--settle', '2s', '--poll', '1s', '--reconcile', '20s', '--json'];

    // Already there when the watch starts: taken too.
    await upload(key('before'), 1);
    let workers = childWorkers(config, join(dir, 'workers-1.log'));
    await workers.start();
    try {
      const started = await callpipe('watch', ...watchArgs);
      expect(started.stderr).toBe('');
      expect(started.code).toBe(0);
      const status = JSON.parse(started.stdout) as WatchStatus;
      expect(status).toMatchObject({ phase: 'watching', mode: 'listing', settleSeconds: 2, updated: false });
      expect(status.watchId).toBe(watchIdOf({ bucket: pc.store.bucket, prefix }, output));

      // Running it again updates the running watch rather than starting another.
      const again = await callpipe('watch', ...watchArgs);
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ watchId: status.watchId, updated: true });

      await Promise.all([
        upload(key('first'), 2),
        upload(key('second'), 3),
        uploadSlowlyInParts(key('parts')),
      ]);
      await expectEachOnce([key('before'), key('first'), key('second'), key('parts')]);

      // The watcher's worker dies; a recording lands meanwhile; a new worker takes over.
      await workers.kill();
      await upload(key('while-down'), 4);
      workers = childWorkers(config, join(dir, 'workers-2.log'));
      await workers.start();
      await expectEachOnce([key('while-down')]);

      const listed = await callpipe('watch', 'status', '--json');
      expect(listed.code).toBe(0);
      const mine = (JSON.parse(listed.stdout) as WatchStatus[]).find((s) => s.watchId === status.watchId);
      expect(mine).toMatchObject({ phase: 'watching', started: 5, failed: 0 });

      // Stopped; a recording lands; started again: it catches up, and nothing is done twice.
      const stopped = await callpipe('watch', 'stop', status.watchId, '--json');
      expect(stopped.code).toBe(0);
      expect(JSON.parse(stopped.stdout)).toMatchObject({ phase: 'stopped', running: 0 });
      await upload(key('while-stopped'), 5);
      const restarted = await callpipe('watch', ...watchArgs);
      expect(restarted.code).toBe(0);
      expect(JSON.parse(restarted.stdout)).toMatchObject({ watchId: status.watchId, updated: false });
      const all = ['before', 'first', 'second', 'parts', 'while-down', 'while-stopped'].map(key);
      await expectEachOnce(all);
      const after = await until(
        'the watch status after the restart',
        async () =>
          JSON.parse((await callpipe('watch', 'status', status.watchId, '--json')).stdout) as WatchStatus[],
        (v) => v[0]!.pending === 0 && v[0]!.running === 0 && v[0]!.skipped >= 5,
      );
      // The restarted watch found the five done calls done (no child) and started only the new one.
      expect(after[0]).toMatchObject({ started: 1, failed: 0, alreadyRunning: 0 });
      expect((await callpipe('watch', 'stop', status.watchId)).code).toBe(0);
      expect(await Promise.all(all.map(executionsOf))).toEqual(all.map(() => 1));
      recordHistory(pc, status.watchId, 'watch-listing-restarted.json');
    } finally {
      await workers.stop();
    }
  });
});

describe('callpipe watch: S3 event notifications', () => {
  it('takes S3 event notifications from an SQS queue (a real SQS-compatible server)', async () => {
    const motoServer = join(venvPython(), '..', 'moto_server');
    expect(existsSync(motoServer), 'moto_server in .tools/venv (npm test installs it)').toBe(true);
    const port = await freePort();
    const moto: ChildProcess = spawn(motoServer, ['-H', '127.0.0.1', '-p', String(port)], {
      stdio: 'ignore',
      env: { PATH: process.env.PATH ?? '' },
    });
    const sqs = new SQSClient({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const callpipe = (...args: string[]) => run(args, inject('stackEnv'));
    try {
      const { QueueUrl } = await until(
        'the queue',
        () =>
          sqs
            .send(new CreateQueueCommand({ QueueName: `watch-${run8}` }))
            .catch(() => ({ QueueUrl: undefined })),
        (v) => v.QueueUrl !== undefined,
        60_000,
      );
      const prefix = `incoming/sqs-${run8}/`;
      // The listing reconciles once at the start (nothing there yet), then not within this test: only a
      // notification can bring the recording in.
      const started = await callpipe(
        'watch',
        `s3://${pc.store.bucket}/${prefix}`,
        '--sqs',
        QueueUrl!,
        '--settle',
        '1s',
        '--reconcile',
        '1h',
        '--json',
      );
      expect(started.code).toBe(0);
      const status = JSON.parse(started.stdout) as WatchStatus;
      expect(status.mode).toBe('sqs');

      const key = `${prefix}通話 ${run8}.wav`;
      await upload(key, 6);
      const head = await pc.store.head(key);
      const notify = (eventName: string, k: string) =>
        sqs.send(
          new SendMessageCommand({
            QueueUrl,
            MessageBody: JSON.stringify({
              Records: [
                {
                  eventVersion: '2.1',
                  eventSource: 'aws:s3',
                  eventTime: new Date().toISOString(),
                  eventName,
                  s3: {
                    bucket: { name: pc.store.bucket },
                    object: {
                      key: encodeURIComponent(k).replace(/%20/g, '+').replace(/%2F/g, '/'),
                      size: head!.size,
                      eTag: head!.etag,
                    },
                  },
                },
              ],
            }),
          }),
        );
      await notify('s3:TestEvent', key);
      await notify('ObjectCreated:Put', key);
      await expectEachOnce([key]);
      const final = await until(
        'the final watch status',
        async () =>
          JSON.parse((await callpipe('watch', 'status', status.watchId, '--json')).stdout) as WatchStatus[],
        (v) => v[0]!.done === 1,
      );
      expect(final[0]).toMatchObject({ started: 1, failed: 0 });
      expect(final[0]!.notifications).toBeGreaterThanOrEqual(2);
      expect((await callpipe('watch', 'stop', status.watchId)).code).toBe(0);
      recordHistory(pc, status.watchId, 'watch-sqs.json');
    } finally {
      sqs.destroy();
      moto.kill('SIGTERM');
    }
  });
});

describe('callpipe watch: latency', () => {
  it('plans a watched call for latency: short sessions cut in silence, every phrase exact', async () => {
    const queuePrefix = uniquePrefix('watch-latency');
    const config = withPrefix(stackConfig(), queuePrefix);
    const callpipe = (...args: string[]) =>
      run(args, { ...inject('stackEnv'), CALLPIPE_TASK_QUEUE_PREFIX: queuePrefix });
    const prefix = `incoming/watch-latency-${run8}/`;
    const key = `${prefix}call.wav`;
    const call = await makeCall(dir, 'latency.wav', {
      durationSeconds: 150,
      stereo: true,
      seed: 21,
      sampleRate: 8000,
    });
    const workers = childWorkers(config, join(dir, 'workers-latency.log'));
    await workers.start();
    try {
      const started = await callpipe(
        'watch',
        `s3://${pc.store.bucket}/${prefix}`,
        '--settle',
        '1s',
        '--json',
      );
      expect(started.code, started.stderr).toBe(0);
      const { watchId } = JSON.parse(started.stdout) as WatchStatus;
      await pc.store.putFile(key, call.path);
      await expectEachOnce([key]);
      const result = JSON.parse(await pc.store.getText(callOutputKeys(output, callIdOfKey(key)).result)) as {
        audio: { channelAnalysis?: { decisions: string[] } };
        sessions: { end: number; cut: string; silence: { start: number; end: number } | null }[];
        utterances: { speaker: string; start: number; text: string }[];
      };
      // Nothing else runs on this test's queues: the account's sessions are free, so the plan is latency.
      expect(result.audio.channelAnalysis?.decisions).toContainEqual(
        expect.stringMatching(/^cut for latency: /),
      );
      // 300 s of audio over two channels, pieces of at least 45 s: several, and never more than six.
      expect(result.sessions.length).toBeGreaterThanOrEqual(4);
      expect(result.sessions.length).toBeLessThanOrEqual(6);
      for (const s of result.sessions.filter((x) => x.cut === 'silence' && x.silence))
        expect(s.silence!.end - s.silence!.start).toBeGreaterThanOrEqual(0.5);
      expect(result.sessions.every((s) => s.cut !== 'hard')).toBe(true);
      const { missing, extra } = compareTranscript(
        result.utterances,
        expectedUtterances(call.script, ['agent', 'customer']),
      );
      expect(missing).toEqual([]);
      expect(extra).toEqual([]);
      expect((await callpipe('watch', 'stop', watchId)).code).toBe(0);
    } finally {
      await workers.stop();
    }
  });
});
