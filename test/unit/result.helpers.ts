/**
 * One call's staged inputs to a result as the workflow sends them (the probe, the facts, the fillers step's
 * output): shared by the tests of the single write and of the insights stage then publish.
 */
import type { ResultFacts } from '../../activities/storage/result-document.ts';
import { createInsightsActivities } from '../../activities/insights/insights-activities.ts';
import {
  createResultActivities,
  type PublishInput,
  type ResultActivityDeps,
  type WriteResultOutput,
} from '../../activities/storage/result-activities.ts';
import type { ProbeResult } from '../../schemas/media-probe.ts';
import { SAMPLE_UTTERANCES } from './nlp.helpers.ts';

export const cost = { requests: 2, retries: 1, bytesSent: 10, bytesReceived: 20 };

/** What the probe returns: the workflow passes it whole as the audio facts. */
const probe: ProbeResult = {
  path: '/tmp/x.wav',
  sizeBytes: 1_600_044,
  fingerprint: 'sha256:abcd',
  container: 'wav',
  codec: 'pcm_s16le',
  streamIndex: 0,
  sampleRate: 8000,
  channels: 2,
  durationSeconds: 100,
  metadataDurationSeconds: 100,
  hasVideo: false,
};

/** The facts as the workflow's writeStage sends them. */
export const facts: ResultFacts = {
  source: { bucket: 'in', key: 'calls/2026/a.wav', etag: 'abc', size: 1234, metadata: { agent: 'sato' } },
  audio: probe,
  plan: {
    tracks: [
      { track: 0, channel: 0, speaker: 'agent', sourceChannels: [0] },
      { track: 1, channel: 1, speaker: 'customer', sourceChannels: [1] },
    ],
  },
  sessions: [
    {
      index: 0,
      track: 0,
      channel: 0,
      speaker: 'agent',
      start: 0,
      end: 100,
      cut: 'end',
      silence: null,
      restarts: 1,
      reStreamedSeconds: 4.5,
      audioSecondsSent: 104.5,
      reused: false,
    },
    {
      index: 1,
      track: 1,
      channel: 1,
      speaker: 'customer',
      start: 0,
      end: 100,
      cut: 'end',
      silence: null,
      restarts: 0,
      reStreamedSeconds: 0,
      audioSecondsSent: 0,
      reused: true,
    },
  ],
  processing: {
    workflowId: 'call-a-1',
    runId: 'run-1',
    startedAt: '2026-11-21T23:58:45.000Z',
    requests: { recognition: 120, fillers: 1, summary: 9 },
    retries: 3,
    restarts: 1,
    reStreamedSeconds: 4.5,
    stageMs: { probe: 1500, recognize: 61_000 },
    wallMs: 75_000,
  },
};

/**
 * The facts of a stereo 8-kHz WAV call, agent on channel 0, with no session's detail and no retry: for
 * tests that need a call's facts but not what they say about its sessions.
 */
export function stereoCallFacts(call: {
  source: ResultFacts['source'];
  durationSeconds: number;
  sizeBytes: number;
  fingerprint: string;
  workflowId: string;
  startedAt: string;
  recognitionRequests: number;
}): ResultFacts {
  return {
    source: call.source,
    audio: {
      durationSeconds: call.durationSeconds,
      sampleRate: 8000,
      channels: 2,
      container: 'wav',
      codec: 'pcm_s16le',
      sizeBytes: call.sizeBytes,
      hasVideo: false,
      fingerprint: call.fingerprint,
    },
    plan: {
      tracks: [
        { track: 0, channel: 0, speaker: 'agent', sourceChannels: [0] },
        { track: 1, channel: 1, speaker: 'customer', sourceChannels: [1] },
      ],
    },
    sessions: [],
    processing: {
      workflowId: call.workflowId,
      runId: 'r',
      startedAt: call.startedAt,
      requests: { recognition: call.recognitionRequests },
      retries: 0,
      restarts: 0,
      reStreamedSeconds: 0,
      stageMs: {},
      wallMs: 1000,
    },
  };
}

export const fillers = {
  step: 'fillers' as const,
  callId: 'call-1',
  batches: 1,
  fallbacks: 0,
  cost,
  utterances: SAMPLE_UTTERANCES.map((u) => ({
    index: u.index,
    normalizedText: u.text,
    cleanedText: u.text.replace(/^(えーっと、あの、|えー、|うーん、)/, ''),
    fillers: u.index === 1 ? [{ text: 'えーっと、', begin: 0, end: 5 }] : [],
  })),
};

/**
 * A call's outputs as the workflow writes them at its end: the insights stage (scored by `rulesKey`,
 * else the shipped rule file) staged at `s/insights.json`, then publish (storage/results.ts).
 */
export async function insightsThenPublish(
  deps: ResultActivityDeps,
  input: PublishInput & { rulesKey?: string },
): Promise<WriteResultOutput> {
  const { rulesKey, ...publish } = input;
  const { summaryKey: _s, keywordsKey: _k, ...staged } = publish;
  const insights = await createInsightsActivities({ store: deps.store }).computeInsights({
    ...staged,
    durationSeconds: input.facts.audio.durationSeconds,
    ...(rulesKey ? { rulesKey } : {}),
    outputKey: 's/insights.json',
  });
  return createResultActivities(deps).publishResult({ ...publish, insightsKey: insights.insightsKey });
}
