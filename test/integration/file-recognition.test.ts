/**
 * File recognition on the real stack (issue 38): the same calls recognized by streams and by pieces of at
 * most 58 s give identical utterances; a piece refused with 550 is sent again and the call completes; a
 * worker killed while a call's pieces are recognized is replaced and the pieces it finished are not
 * recognized again; 90 s of continuous tone (no silence to cut in) goes to a stream session. Each test runs
 * an emulator of its own and workers on a task-queue prefix of its own, against the shared stack's
 * Temporal and S3. Every wait is for work done (a result, an object, a log line), never a clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EmulatorOptions } from '../../emulator/server.ts';
import { taskQueues, type Config } from '../../schemas/config.ts';
import { callKeys, partialResultKey, pieceGroupResultKey } from '../../schemas/call-keys.ts';
import type { RecognitionMode } from '../../schemas/recognition.ts';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { resolveSource, submitRecording, type Submitted } from '../../cli/submit.ts';
import {
  childWorkers,
  compareTranscript,
  expectedUtterances,
  inProcessWorkers,
  makeCall,
  configForEmulator,
  type GeneratedCall,
  ANY_SPEAKER,
} from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { fileRequestsAnswered, readRequestLog } from '../helpers/request-log.ts';
import { testEmulator } from '../helpers/own-service.ts';
import { synthesize, wavFile, type PhraseAt } from '../helpers/dtmf-audio.ts';
import type { ProcessRecordingResult } from '../../workflows/process-recording.ts';

const SPEED = 100;

interface ResultDoc {
  utterances: { speaker: string; start: number; end: number; text: string }[];
  sessions: {
    start: number;
    end: number;
    restarts: number;
    restartReasons: string[];
    recognition?: string;
  }[];
  recognition?: { requested: string; used: string; reason: string };
}

const timing = (u: ResultDoc['utterances'][number]) => ({
  speaker: u.speaker,
  start: u.start,
  end: u.end,
  text: u.text,
});

let dir: string;
let pc: PipelineClient;
let stereo: GeneratedCall;
let mono: GeneratedCall;
let tone: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-file-'));
  pc = await connectPipeline(stackConfig());
  stereo = await makeCall(dir, 'stereo-4min.wav', { durationSeconds: 240, stereo: true, seed: 21 });
  mono = await makeCall(dir, 'mono-5min.wav', {
    durationSeconds: 300,
    stereo: false,
    seed: 22,
    sampleRate: 8000,
  });
  // Phrases, then 90 s of a continuous 425-Hz tone (music on hold has no silence), then phrases again.
  const phrases: PhraseAt[] = [
    { id: 3, start: 2 },
    { id: 17, start: 8 },
    { id: 120, start: 15 },
    { id: 42, start: 121 },
    { id: 88, start: 128 },
  ];
  const audio = synthesize({ rate: 8000, phrases, duration: 135, noiseDbfs: -60 });
  for (let i = 25 * 8000; i < 115 * 8000; i++) audio[i] = 0.25 * Math.sin((2 * Math.PI * 425 * i) / 8000);
  tone = join(dir, 'tone-90s.wav');
  writeFileSync(tone, wavFile([audio], 8000));
}, 120_000);

afterAll(async () => {
  await pc?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function emulatorWith(label: string, options: EmulatorOptions = {}) {
  const { emulator, requestLogPath } = await testEmulator(dir, label, { speed: SPEED, ...options });
  const config = configForEmulator(emulator, label, SPEED);
  return { emulator, config, requestLogPath };
}

async function submit(
  config: Config,
  path: string,
  label: string,
  recognition: RecognitionMode,
  strategy: 'fixed' | 'balanced' = 'fixed',
) {
  const source = await resolveSource(path, pc.store, pc.config);
  return submitRecording(pc, source, {
    output: { bucket: pc.config.s3.bucket, prefix: `file-recognition/${label}/` },
    redo: true,
    recognition,
    // fixed: streams as long as allowed, one session per track here, cut nowhere (a balanced plan
    // may cut hard inside a long tone); balanced: a track's sessions cut in its silences.
    extra: { queues: taskQueues(config), pacingSpeed: SPEED, plan: { strategy } },
  });
}

async function resultOf(submitted: Submitted): Promise<ResultDoc> {
  const result: ProcessRecordingResult = await submitted.handle.result();
  expect(result.status, result.reason).toBe('done');
  return JSON.parse(await pc.store.getText(result.resultKey!)) as ResultDoc;
}

describe('file recognition: streams and pieces', () => {
  it('the same calls by streams and by file pieces: identical utterances (text, speaker, start, end)', async () => {
    const { emulator, config, requestLogPath } = await emulatorWith('same');
    const workers = await inProcessWorkers(config);
    try {
      for (const [call, speakers] of [
        [stereo, ['agent', 'customer']],
        [mono, [ANY_SPEAKER]],
      ] as const) {
        const streamed = await resultOf(await submit(config, call.path, 'same-stream', 'stream'));
        const filed = await resultOf(await submit(config, call.path, 'same-file', 'file'));
        expect(filed.recognition?.requested).toBe('file');
        expect(streamed.recognition).toMatchObject({ requested: 'stream', used: 'stream' });
        const pieces = filed.sessions.filter((s) => s.recognition === 'file');
        expect(Math.max(...pieces.map((s) => Math.round((s.end - s.start) * 1000)))).toBeLessThanOrEqual(
          58_000,
        );
        expect(pieces.length).toBeGreaterThan(streamed.sessions.length);
        expect(filed.utterances.map(timing)).toEqual(streamed.utterances.map(timing));
        if (call === mono) {
          // Streams cut in silence (a balanced plan: several sessions) frame the audio as the pieces do,
          // so a one-track call's voices, separated from the same utterances, get the same names.
          const cut = await resultOf(await submit(config, call.path, 'same-balanced', 'stream', 'balanced'));
          expect(cut.sessions.length).toBeGreaterThan(1);
          expect(cut.utterances.map(timing)).toEqual(filed.utterances.map(timing));
        }
        if (call === stereo) {
          const { missing, extra } = compareTranscript(
            filed.utterances,
            expectedUtterances(call.script, [...speakers]),
          );
          expect(missing).toEqual([]);
          expect(extra).toEqual([]);
        }
      }
      expect(fileRequestsAnswered(readRequestLog(requestLogPath)).requests).toBeGreaterThan(0);
    } finally {
      await workers.stop();
      await emulator.close();
    }
  });

  it('a piece refused with 550 is sent again and the call completes', async () => {
    const { emulator, config, requestLogPath } = await emulatorWith('no-resource', {
      faults: { streamErrors: [{ code: 550, afterAudioSeconds: 0, times: 2 }] },
    });
    const workers = await inProcessWorkers(config);
    try {
      const doc = await resultOf(await submit(config, stereo.path, 'no-resource', 'file'));
      const refused = readRequestLog(requestLogPath).filter((e) => e.file && e.status === 550);
      expect(refused).toHaveLength(2);
      const retried = doc.sessions.filter((s) => s.restarts > 0);
      expect(retried.length).toBeGreaterThan(0);
      expect(retried.flatMap((s) => s.restartReasons).join(' ')).toMatch(/550/);
      const { missing, extra } = compareTranscript(
        doc.utterances,
        expectedUtterances(stereo.script, ['agent', 'customer']),
      );
      expect(missing).toEqual([]);
      expect(extra).toEqual([]);
    } finally {
      await workers.stop();
      await emulator.close();
    }
  });

  it('90 s of continuous tone goes to a stream session; the pieces around it are files; same utterances as streams', async () => {
    const { emulator, config } = await emulatorWith('tone');
    const workers = await inProcessWorkers(config);
    try {
      const streamed = await resultOf(await submit(config, tone, 'tone-stream', 'stream'));
      const filed = await resultOf(await submit(config, tone, 'tone-file', 'file'));
      const streams = filed.sessions.filter((s) => s.recognition === 'stream');
      expect(streams).toHaveLength(1);
      expect(streams[0]!.start).toBeLessThanOrEqual(25);
      expect(streams[0]!.end).toBeGreaterThanOrEqual(115);
      expect(filed.sessions.some((s) => s.recognition === 'file')).toBe(true);
      expect(filed.recognition).toMatchObject({ used: 'mixed' });
      expect(filed.utterances.map(timing)).toEqual(streamed.utterances.map(timing));
    } finally {
      await workers.stop();
      await emulator.close();
    }
  });
});

describe('file recognition: a killed worker', () => {
  it('a worker killed during a call’s pieces: a new one finishes the call without recognizing its kept pieces again', async () => {
    // Slow file requests (a 58-s piece takes 5.8 s) and two sessions: the call's pieces take several rounds.
    const { emulator, config, requestLogPath } = await emulatorWith('kill', {
      fileRtf: 10,
      concurrentSessions: 2,
    });
    // Two sessions per worker process, as the account has, shared through the account's budget (on this
    // prefix's fresh deployment: the version is made current before the asr pollers hold leases).
    const lease = {
      CALLPIPE_ASR_LEASE_SECONDS: '10',
      CALLPIPE_ASR_CONCURRENT_SESSIONS: '2',
      CALLPIPE_ASR_ACCOUNT_SESSIONS: '2',
    };
    const first = childWorkers(config, join(dir, 'kill-workers-1.log'), lease);
    await first.start();
    let second: ReturnType<typeof childWorkers> | undefined;
    try {
      const submitted = await submit(config, mono.path, 'kill', 'file');
      const staging = callKeys({
        output: { bucket: pc.config.s3.bucket, prefix: 'file-recognition/kill/' },
        stagingPrefix: pc.config.s3.stagingPrefix,
        callId: submitted.callId,
        workflowId: submitted.workflowId,
      }).staging;
      const partial = partialResultKey(pieceGroupResultKey(staging, 0));
      // Wait until the group's progress holds two finished pieces, then kill the worker as a crash would.
      let kept: number[] = [];
      for (;;) {
        const found = await pc.store.read(partial);
        if (found)
          kept = (JSON.parse(found.body.toString('utf8')) as { pieces: { session: number }[] }).pieces.map(
            (p) => p.session,
          );
        if (kept.length >= 2) break;
        await sleep(100);
      }
      await first.kill();
      const answeredBefore = fileRequestsAnswered(readRequestLog(requestLogPath)).requests;
      second = childWorkers(config, join(dir, 'kill-workers-2.log'), lease);
      await second.start();
      const doc = await resultOf(submitted);
      const pieces = doc.sessions.filter((s) => s.recognition === 'file').length;
      const answeredAfter = fileRequestsAnswered(readRequestLog(requestLogPath)).requests - answeredBefore;
      // The new worker sends only the pieces not kept (the killed one's last requests may still be
      // answered after it died: at most its two sessions' worth).
      expect(answeredAfter).toBeLessThanOrEqual(pieces - kept.length + 2);
      const { missing, extra } = compareTranscript(
        doc.utterances,
        expectedUtterances(mono.script, [ANY_SPEAKER]),
      );
      expect(missing).toEqual([]);
      expect(extra).toEqual([]);
    } finally {
      await first.stop();
      await second?.stop();
      await emulator.close();
    }
  });
});
