/**
 * Who said what, on the shared test stack (real Temporal, S3, ffmpeg and emulator): a stereo call recorded
 * with the customer on channel 0 comes out with the roles right and the swap recorded (and kept as mapped
 * with `roles: fixed`); a mono call of two voices, each leg through its own telephone path, comes out with
 * per-utterance speakers matching its script and the default scorecard answering its agent questions from
 * the agent's utterances; a one-voice mono recording stays one speaker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { outputLocation, resolveSource, submitRecording } from '../../cli/submit.ts';
import { scriptedCall } from '../../activities/media/call-script.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import type { FixtureScript } from '../../schemas/synthetic-recording.ts';
import type { CallSpecOverrides } from '../../schemas/call-spec.ts';
import { resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';
import { loadPhrasebook } from '../../emulator/phrasebook.ts';
import { stackConfig } from '../helpers/stack.ts';
import {
  ANY_SPEAKER,
  LEG_SPEAKERS,
  compareTranscript,
  expectedUtterances,
  saysRedacted,
} from '../helpers/pipeline.ts';

/** The per-utterance speaker accuracy the speakers benchmark holds the separation to (bench/README.md). */
const SPEAKER_ACCURACY = 0.95;

let dir: string;
let pc: PipelineClient;
const book = loadPhrasebook();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-speakers-'));
  pc = await connectPipeline(stackConfig());
});

afterAll(async () => {
  await pc?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function processed(
  name: string,
  script: FixtureScript,
  extra?: CallSpecOverrides,
): Promise<{ doc: ResultDocument; workflowId: string }> {
  const path = join(dir, name);
  await renderFixture(script, path, { sampleRate: 8000 });
  const source = await resolveSource(path, pc.store, pc.config);
  const submitted = await submitRecording(pc, source, {
    output: outputLocation(undefined, pc.config),
    redo: true,
    ...(extra ? { extra } : {}),
  });
  const r = await submitted.handle.result();
  expect(r.status, r.reason).toBe('done');
  const doc = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(r.resultKey!)));
  return { doc, workflowId: submitted.handle.workflowId };
}

async function rolesAttribute(workflowId: string): Promise<unknown> {
  const described = await pc.client.workflow.getHandle(workflowId).describe();
  return described.searchAttributes.CallpipeRoles;
}

/** The scripted call with its channels the other way round: the customer on channel 0. */
function customerOnLeft(seed: number): FixtureScript {
  const { script } = scriptedCall({ durationSeconds: 100, stereo: true, seed, complaint: true });
  return { ...script, channels: [script.channels[1]!, script.channels[0]!] };
}

describe('speakers established, not assumed', () => {
  it('a stereo call with the customer on channel 0 comes out with the roles right and the swap recorded', async () => {
    const script = customerOnLeft(41);
    const { doc, workflowId } = await processed('customer-left.wav', script);
    expect(doc.speakerRoles).toMatchObject({
      source: 'channels',
      decision: 'swapped',
      swapped: true,
      inferred: false,
    });
    expect(doc.speakerRoles!.speakers.find((s) => s.track === 1)).toMatchObject({
      speaker: 'agent',
      configured: 'customer',
    });
    // Every phrase with the speaker who said it: channel 1 holds the agent's lines.
    const { missing, extra } = compareTranscript(
      doc.utterances,
      expectedUtterances(script, ['customer', 'agent']),
    );
    expect(missing).toEqual([]);
    expect(extra).toEqual([]);
    // The greeting and the apology are the agent's again.
    const answer = (id: string) => doc.scorecard!.answers.find((a) => a.id === id)!;
    expect(answer('greeting').answer).toBe('yes');
    expect(answer('apology').answer).toBe('yes');
    expect(await rolesAttribute(workflowId)).toEqual(['swapped']);
  });

  it('with roles: fixed the channel map stands, and the result says the evidence disagrees', async () => {
    const script = customerOnLeft(42);
    const { doc, workflowId } = await processed('customer-left-fixed.wav', script, {
      plan: { channels: { roles: 'fixed' } },
    });
    expect(doc.speakerRoles).toMatchObject({ decision: 'fixed', swapped: false, mode: 'fixed' });
    expect(doc.speakerRoles!.summary).toMatch(/other way round/);
    expect(doc.utterances.filter((u) => u.track === 0).every((u) => u.speaker === 'agent')).toBe(true);
    expect(await rolesAttribute(workflowId)).toEqual(['fixed']);
  });

  it('a mono call of two voices comes out with per-utterance speakers matching its script', async () => {
    const { script } = scriptedCall({ durationSeconds: 150, stereo: false, seed: 43, complaint: true });
    expect(script.channels[0]!.legs).toHaveLength(2);
    const { doc, workflowId } = await processed('two-voices-mono.wav', script);
    expect(doc.speakerRoles).toMatchObject({ source: 'voices', inferred: true, decision: 'inferred' });
    expect(doc.speakerRoles!.separation).toMatchObject({ voices: 2 });
    // Every phrase recognized, in place (words and times).
    const words = compareTranscript(doc.utterances, expectedUtterances(script, [ANY_SPEAKER]));
    expect(words.missing).toEqual([]);
    // Each phrase's speaker is its leg's.
    const phrases = script.channels[0]!.phrases;
    let right = 0;
    for (const p of phrases) {
      const u = doc.utterances.find(
        (x) => Math.abs(x.start - p.start) <= 0.3 && saysRedacted(x.text, book.get(p.id)!),
      );
      if (u?.speaker === LEG_SPEAKERS[p.leg ?? 0]) right++;
    }
    const accuracy = right / phrases.length;
    console.log(`mono two-voice call: ${right}/${phrases.length} utterances with the script's speaker`);
    expect(accuracy).toBeGreaterThanOrEqual(SPEAKER_ACCURACY);
    expect(doc.utterances.every((u) => u.speakerConfidence !== undefined)).toBe(true);
    // The default scorecard answers its agent questions from the agent's utterances.
    const byIndex = new Map(doc.utterances.map((u, i) => [i, u]));
    for (const id of ['greeting', 'identity', 'apology']) {
      const a = doc.scorecard!.answers.find((x) => x.id === id)!;
      expect(a.answer, id).toBe('yes');
      for (const p of a.points) expect(byIndex.get(p.utterance!)?.speaker, id).toBe('agent');
    }
    expect(doc.talk.bySpeaker.map((t) => t.speaker).sort()).toEqual(['agent', 'customer']);
    expect(await rolesAttribute(workflowId)).toEqual(['inferred']);
  });

  it('a one-voice mono recording stays one speaker', async () => {
    const { script } = scriptedCall({ durationSeconds: 90, stereo: false, seed: 44 });
    const agentOnly: FixtureScript = {
      ...script,
      channels: [
        { ...script.channels[0]!, phrases: script.channels[0]!.phrases.filter((p) => (p.leg ?? 0) === 0) },
      ],
    };
    const { doc } = await processed('one-voice-mono.wav', agentOnly);
    expect(doc.speakerRoles!.separation!.voices).toBe(1);
    expect(new Set(doc.utterances.map((u) => u.speaker)).size).toBe(1);
    expect(doc.utterances[0]!.speaker).toBe('agent');
  });
});
