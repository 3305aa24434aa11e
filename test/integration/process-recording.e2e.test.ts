/**
 * processRecording end to end on the real stack: real Temporal dev server, real SeaweedFS, real ffmpeg,
 * the emulator over real HTTP at speed 100, the stack's own worker process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { outputLocation, resolveSource, submitRecording } from '../../cli/submit.ts';
import {
  compareTranscript,
  expectedUtterances,
  makeCall,
  type GeneratedCall,
  ANY_SPEAKER,
} from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { recordHistory } from '../helpers/histories.ts';
import type { ProcessRecordingResult } from '../../workflows/process-recording.ts';

/** The activities a run scheduled, by type: what it did, in its own history. */
async function activitiesScheduled(handle: WorkflowHandle): Promise<string[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).flatMap((e) => {
    const type = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return type ? [type] : [];
  });
}

let dir: string;
let pc: PipelineClient;
let stereo: GeneratedCall;
let long: GeneratedCall;
let corrupt: string;
const results = new Map<string, ProcessRecordingResult>();
const callIds = new Map<string, string>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-e2e-'));
  pc = await connectPipeline(stackConfig());
  // A stereo call at 44.1 kHz in M4A, a mono 8 kHz WAV longer than 3,000 s, and a corrupt file.
  stereo = await makeCall(dir, 'stereo.m4a', {
    durationSeconds: 75,
    stereo: true,
    seed: 7,
    sampleRate: 44100,
  });
  long = await makeCall(dir, 'long.wav', {
    durationSeconds: 3060,
    stereo: false,
    seed: 11,
    sampleRate: 8000,
  });
  corrupt = join(dir, 'corrupt.wav');
  writeFileSync(corrupt, Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt '), Buffer.alloc(3)]));

  const output = outputLocation(undefined, pc.config);
  const submitted = await Promise.all(
    [stereo.path, long.path, corrupt].map(async (path) => {
      const source = await resolveSource(path, pc.store, pc.config);
      return { path, s: await submitRecording(pc, source, { output }) };
    }),
  );
  for (const { path, s } of submitted) {
    callIds.set(path, s.callId);
    results.set(path, await s.handle.result());
    // `CALLPIPE_RECORD_HISTORIES=1` refreshes the histories that the replay test guards determinism with.
    if (path !== long.path) {
      const name = path === corrupt ? 'process-recording-failed.json' : 'process-recording-stereo.json';
      recordHistory(pc, s.workflowId, name);
    }
  }
}, 600_000);

afterAll(async () => {
  await pc?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function resultOf(path: string) {
  const r = results.get(path)!;
  expect(r.status, r.reason).toBe('done');
  return JSON.parse(await pc.store.getText(r.resultKey!)) as {
    utterances: { speaker: string; start: number; end: number; text: string; cleanedText?: string }[];
    sessions: { channel: unknown; start: number; end: number; cut: string }[];
  };
}

describe('processRecording', () => {
  it('transcribes a stereo M4A call: every phrase, right speaker, start within ±0.3 s', async () => {
    const result = await resultOf(stereo.path);
    const { missing, extra } = compareTranscript(
      result.utterances,
      expectedUtterances(stereo.script, ['agent', 'customer']),
    );
    expect(missing).toEqual([]);
    expect(extra).toEqual([]);
    // transcript.vtt sits beside result.json.
    const vttKey = results.get(stereo.path)!.resultKey!.replace(/result\.json$/, 'transcript.vtt');
    expect((await pc.store.getText(vttKey)).startsWith('WEBVTT')).toBe(true);
  });

  it('splits a recording over 3,000 s into sessions cut in silence and loses no phrase at a cut', async () => {
    const result = await resultOf(long.path);
    expect(result.sessions.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...result.sessions.map((s) => s.end - s.start))).toBeLessThanOrEqual(3000);
    const { missing, extra } = compareTranscript(
      result.utterances,
      expectedUtterances(long.script, [ANY_SPEAKER]),
    );
    expect(missing).toEqual([]);
    expect(extra).toEqual([]);
  });

  it('fails a corrupt file with a readable reason in error.json, without failing the others', async () => {
    const r = results.get(corrupt)!;
    expect(r.status).toBe('failed');
    expect(r.stage).toBe('probe');
    const error = JSON.parse(await pc.store.getText(r.errorKey!)) as { stage: string; reason: string };
    expect(error.stage).toBe('probe');
    expect(error.reason).toMatch(/[a-z]/);
    expect(error.reason).not.toMatch(/\n\s+at /); // no stack trace
    expect(results.get(stereo.path)!.status).toBe('done');
  });

  it('running the same batch again starts no new recognition', async () => {
    const output = outputLocation(undefined, pc.config);
    for (const path of [stereo.path, long.path]) {
      const source = await resolveSource(path, pc.store, pc.config);
      const again = await submitRecording(pc, source, { output });
      expect(again.callId).toBe(callIds.get(path));
      expect((await again.handle.result()).status).toBe('skipped');
      // Read from the run's own history, not the stack's shared request log, so this file can run beside
      // others: the run looked the call up and did nothing else (no probe, plan, recognition or text step).
      expect(await activitiesScheduled(again.handle)).toEqual(['resultExists']);
    }
  });
});
