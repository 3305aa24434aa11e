import { describe, expect, it } from 'vitest';
import { createResultActivities } from '../../activities/storage/result-activities.ts';
import { buildErrorDocument, buildResult, redact } from '../../activities/storage/result-document.ts';
import { talkTimeBySpeaker } from '../../schemas/talk-time.ts';
import { withFailureBoundary } from '../../activities/failure-boundary.ts';
import { callOutputKeys, outputLocationOf } from '../../schemas/call-keys.ts';
import { escapeCueText, toWebVtt, vttTimestamp } from '../../activities/storage/webvtt.ts';
import type { Stage } from '../../schemas/recording.ts';
import { errorDocumentSchema, resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';
import { canonicalRules, defaultRules, parseRules } from '../../activities/insights/rule-file.ts';
import { MemoryStore, SAMPLE_UTTERANCES, timeline, utterance } from './nlp.helpers.ts';
import { cost, facts, fillers, insightsThenPublish } from './result.helpers.ts';
import { createInsightsActivities } from '../../activities/insights/insights-activities.ts';

describe('talkTimeBySpeaker', () => {
  it('merges a speaker’s own overlaps, and measures silence and cross-talk', () => {
    const talk = talkTimeBySpeaker(
      [
        utterance(0, 'agent', 0, 10, 'a'),
        utterance(1, 'agent', 5, 15, 'b'), // overlaps the agent's own: counts once
        utterance(2, 'customer', 12, 20, 'c'), // 3 s of cross-talk
        utterance(3, 'customer', 95, 120, 'd'), // clamped to the call's end
      ],
      100,
      ['agent', 'customer', 'supervisor'],
    );
    expect(talk.bySpeaker).toEqual([
      { speaker: 'agent', utterances: 2, talkSeconds: 15, silenceSeconds: 85, talkShare: 0.15 },
      { speaker: 'customer', utterances: 2, talkSeconds: 13, silenceSeconds: 87, talkShare: 0.13 },
      { speaker: 'supervisor', utterances: 0, talkSeconds: 0, silenceSeconds: 100, talkShare: 0 },
    ]);
    expect(talk.overlapSeconds).toBe(3);
    expect(talk.silenceSeconds).toBe(75);
  });
});

describe('WebVTT', () => {
  it('formats timestamps as HH:MM:SS.mmm, hours included', () => {
    expect(vttTimestamp(0)).toBe('00:00:00.000');
    expect(vttTimestamp(3.2)).toBe('00:00:03.200');
    expect(vttTimestamp(3725.0015)).toBe('01:02:05.002');
    expect(vttTimestamp(36_000)).toBe('10:00:00.000');
  });

  it('writes voice-tagged cues of the cleaned text, in time order, escaping markup', () => {
    const vtt = toWebVtt([
      { index: 1, speaker: 'customer', start: 3.8, end: 6, text: 'えーっと、はい', cleanedText: 'はい' },
      { index: 0, speaker: 'agent', start: 0.5, end: 3.2, text: 'A < B & C' },
      { index: 2, speaker: 'agent', start: 7, end: 7, text: 'えー', cleanedText: '' },
      { index: 3, speaker: 'agent', start: 8, end: 8, text: '一瞬' },
    ]);
    expect(vtt).toBe(
      'WEBVTT\n\n' +
        'u0\n00:00:00.500 --> 00:00:03.200\n<v agent>A &lt; B &amp; C</v>\n\n' +
        'u1\n00:00:03.800 --> 00:00:06.000\n<v customer>はい</v>\n\n' +
        'u3\n00:00:08.000 --> 00:00:08.001\n<v agent>一瞬</v>\n',
    );
    expect(escapeCueText('a\n\nb --> c')).toBe('a b --&gt; c');
  });
});

const parts = {
  callId: 'call-1',
  timeline: {
    ...timeline(
      [...SAMPLE_UTTERANCES].reverse().map((u) => (u.index === 0 ? { ...u, confidence: 0.93 } : u)),
    ),
    sessions: [
      { session: 0, restartReasons: ['session error 1: stream reset, token=s3cr3t'] },
      { session: 1, restartReasons: [] },
    ],
  },
  fillers,
  stepFailures: [{ step: 'summary', reason: 'summary: invalid input (Bearer abc.def-123)' }],
  facts,
  writtenAt: '2026-11-22T00:00:00.000Z',
};

describe('buildResult: the document', () => {
  it('assembles a valid document from the timeline, the steps and the facts', () => {
    const result = buildResult(parts);
    expect(resultDocumentSchema.safeParse(result).success).toBe(true);
    expect(result.schemaVersion).toBe(2);
    expect(result.utterances.map((u) => u.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(result.utterances[0]!.confidence).toBe(0.93);
    expect(result.utterances[1]).not.toHaveProperty('confidence');
    expect(result.utterances[1]).toMatchObject({
      speaker: 'customer',
      start: 3.8,
      end: 6,
      text: 'えーっと、あの、請求書の件で電話しました',
      cleanedText: '請求書の件で電話しました',
      fillers: [{ text: 'えーっと、', begin: 0, end: 5 }],
      sentiment: null,
    });
    expect(result.source).toEqual({
      uri: 's3://in/calls/2026/a.wav',
      bucket: 'in',
      key: 'calls/2026/a.wav',
      etag: 'abc',
      sizeBytes: 1234,
      fingerprint: 'sha256:abcd',
      metadata: { agent: 'sato' },
    });
    expect(result.audio).toEqual({
      durationSeconds: 100,
      container: 'wav',
      codec: 'pcm_s16le',
      sampleRate: 8000,
      channels: 2,
      sizeBytes: 1_600_044,
      hasVideo: false,
      tracks: [
        { track: 0, speaker: 'agent', sourceChannels: [0] },
        { track: 1, speaker: 'customer', sourceChannels: [1] },
      ],
    });
    expect(result.sessions[0]).toEqual({
      index: 0,
      track: 0,
      speaker: 'agent',
      start: 0,
      end: 100,
      cut: 'end',
      silence: null,
      restarts: 1,
      reStreamedSeconds: 4.5,
      restartReasons: ['session error 1: stream reset, token=[redacted]'],
      audioSecondsSent: 104.5,
      reused: false,
      utterances: 6,
    });
    expect(result.sessions[1]).toMatchObject({ restartReasons: [], reused: true, utterances: 0 });
    expect(result.sessions[1]).not.toHaveProperty('audioKey');
    expect(result.processing).toEqual({
      workflowId: 'call-a-1',
      runId: 'run-1',
      startedAt: '2026-11-21T23:58:45.000Z',
      requests: {
        recognition: { requests: 120, retries: 0 },
        fillers: cost,
        summary: { requests: 9, retries: 0 },
      },
      totalRequests: 131,
      retries: 3,
      restarts: 1,
      reStreamedSeconds: 4.5,
      wallSeconds: { probe: 1.5, recognize: 61, total: 75 },
    });
    expect(result.stepFailures).toEqual([
      { step: 'summary', reason: 'summary: invalid input (Bearer [redacted])' },
    ]);
    expect(result.summary).toBeNull();
    expect(result.sentiment).toBeNull();
    expect(result.talk.bySpeaker.map((s) => s.speaker)).toEqual(['agent', 'customer']);
  });

  it('a timeline merged by a 0.1 worker (no sessions) gives sessions without restart reasons', () => {
    const { sessions: _sessions, ...old } = parts.timeline;
    const result = buildResult({ ...parts, timeline: old });
    expect(result.sessions.map((s) => s.restartReasons)).toEqual([[], []]);
  });
});

describe('buildResult: steps, schema and reasons', () => {
  it('dialog acts reach each utterance and the requests; without the step, utterances have none', () => {
    const dialogActs = {
      step: 'dialogActs' as const,
      callId: 'call-1',
      grain: 'turn' as const,
      units: 5,
      utterances: SAMPLE_UTTERANCES.map((u) => ({
        index: u.index,
        dialogActs: u.index === 0 ? ['greeting'] : [],
      })),
      cost: { ...cost, requests: 5 },
    };
    const result = buildResult({ ...parts, dialogActs });
    expect(result.utterances.find((u) => u.index === 0)!.dialogActs).toEqual(['greeting']);
    expect(result.processing.requests.dialogActs).toMatchObject({ requests: 5 });
    expect(result.categories!.find((c) => c.name === 'greeting')!.matched).toBe(true);
    const without = buildResult(parts);
    expect(without.utterances.every((u) => u.dialogActs === undefined)).toBe(true);
    expect(without.processing.requests.dialogActs).toBeUndefined();
  });

  it('without the fillers step, cleaned text is null and the transcript falls back to the raw text', () => {
    const result = buildResult({ ...parts, fillers: undefined });
    expect(result.utterances.every((u) => u.cleanedText === null && u.fillers.length === 0)).toBe(true);
    expect(toWebVtt(result.utterances)).toContain('<v customer>えーっと、あの、請求書の件で電話しました</v>');
  });

  it('refuses a document that breaks the schema, naming the field', () => {
    expect(() => buildResult({ ...parts, stepFailures: [{ step: 'translate', reason: 'x' }] })).toThrow(
      /stepFailures/,
    );
  });

  it('redacts tokens in reasons', () => {
    expect(redact('auth failed: Authorization: Bearer eyJhbGciOi.x_y')).toBe(
      'auth failed: Authorization: Bearer [redacted]',
    );
    expect(redact('{"clientSecret":"s3cr3t"}')).not.toContain('s3cr3t');
  });

  it('masks personal data in reasons (error.json, step failures, restart reasons), keys and ids left alone', () => {
    expect(redact('summary: the service said 090-1234-5678 is invalid')).toBe(
      'summary: the service said [電話番号] is invalid',
    );
    const key = 'cannot read s3://in/calls/2026/a-0312345678.wav: NoSuchKey';
    expect(redact(key)).toBe(key);
  });
});

function staged() {
  const store = new MemoryStore('staging');
  store.objects.set('s/timeline.json', JSON.stringify(timeline(SAMPLE_UTTERANCES)));
  store.objects.set('s/fillers.json', JSON.stringify(fillers));
  store.objects.set(
    's/summary.json',
    JSON.stringify({
      step: 'summary',
      callId: 'call-1',
      text: '請求書の件。',
      mode: 'extract-cc',
      levels: 1,
      windows: 1,
      documentChars: 90,
      cost,
    }),
  );
  store.objects.set(
    's/keywords.json',
    JSON.stringify({
      step: 'keywords',
      callId: 'call-1',
      maxKeywords: 10,
      keywords: [{ text: '請求書', score: 3 }],
      cost,
    }),
  );
  return store;
}
const input = {
  callId: 'call-1',
  output: callOutputKeys(outputLocationOf('s3://results-bucket/out', 'staging'), 'call-1'),
  timelineKey: 's/timeline.json',
  fillersKey: 's/fillers.json',
  summaryKey: 's/summary.json',
  keywordsKey: 's/keywords.json',
  stepFailures: [{ step: 'sentiment', reason: 'sentiment: invalid' }],
  facts,
};

describe('publish (after the insights stage) and writeError: publish', () => {
  it('writes transcript.vtt and call.html, then result.json last, in the output bucket; a repeat writes the same', async () => {
    const store = staged();
    const { writeError } = createResultActivities({ store });
    await writeError({
      callId: 'call-1',
      output: input.output,
      source: facts.source,
      stage: 'fillers',
      reason: 'earlier run',
    });
    const out = await insightsThenPublish({ store }, input);
    expect(out).toEqual({
      bucket: 'results-bucket',
      resultKey: 'out/call-1/result.json',
      vttKey: 'out/call-1/transcript.vtt',
      utterances: 6,
      categories: expect.any(Array),
    });
    const results = store.withBucket('results-bucket');
    expect(results.writes.slice(-3)).toEqual([
      'results-bucket/out/call-1/transcript.vtt',
      'results-bucket/out/call-1/call.html',
      'results-bucket/out/call-1/result.json',
    ]);
    expect(results.objects.get('out/call-1/call.html')).toContain('<title>call-1 · callpipe call</title>');
    expect(results.objects.has('out/call-1/error.json')).toBe(false);
    const doc = resultDocumentSchema.parse(results.json('out/call-1/result.json'));
    expect(doc.summary?.text).toBe('請求書の件。');
    expect(doc.keywords).toEqual([{ text: '請求書', score: 3 }]);
    expect(doc.processing.requests.keywords).toEqual(cost);
    const vtt = results.objects.get('out/call-1/transcript.vtt')!;
    expect(vtt).toContain('00:00:03.800 --> 00:00:06.000\n<v customer>請求書の件で電話しました</v>');
    // Scored by the shipped rule file, by the insights stage before the write.
    expect(doc.rules).toMatchObject({ name: defaultRules().rules.name, digest: defaultRules().digest });
    expect(Date.parse(doc.rules!.scoredAt)).toBeLessThanOrEqual(Date.parse(doc.writtenAt));
    expect(out.categories).toEqual(doc.categories!.filter((c) => c.matched).map((c) => c.name));
    const timeless = (d: ResultDocument) => ({ ...d, writtenAt: '', rules: { ...d.rules!, scoredAt: '' } });
    const first = timeless(doc);
    await insightsThenPublish({ store }, input);
    expect(timeless(resultDocumentSchema.parse(results.json('out/call-1/result.json')))).toEqual(first);
    expect(store.writes.every((w) => !w.startsWith('staging/out'))).toBe(true);
  });

  it('scores the call with the rule file stored at rulesKey, and names the matched categories', async () => {
    const store = staged();
    const rules = parseRules(
      'format: 1\nname: mine\nversion: "7"\ncategories:\n  - name: billing\n    rules: [{ kind: phrase, terms: [請求書] }]\n  - name: never\n    rules: [{ kind: phrase, terms: [存在しない言葉] }]\n',
      'mine.yaml',
    );
    await store.put('in/rules/abc/rules.json', canonicalRules(rules.rules));
    const out = await insightsThenPublish({ store }, { ...input, rulesKey: 'in/rules/abc/rules.json' });
    expect(out.categories).toEqual(['billing']);
    const doc = resultDocumentSchema.parse(store.withBucket('results-bucket').json('out/call-1/result.json'));
    expect(doc.rules).toMatchObject({ name: 'mine', version: '7', digest: rules.digest });
    expect(doc.categories!.map((c) => [c.name, c.matched])).toEqual([
      ['billing', true],
      ['never', false],
    ]);
    expect(doc.scorecard).toBeNull();
    expect(doc.metrics!.bySpeaker.map((s) => s.speaker)).toEqual(doc.speakers);
  });

  it('refuses a call id that would leave the prefix, as a non-retryable failure, writing nothing', async () => {
    const store = staged();
    // As workers run them: behind the activity boundary, which types every failure.
    const { publishResult } = withFailureBoundary(createResultActivities({ store }), () => 1);
    await expect(
      publishResult({ ...input, callId: '../escape', insightsKey: 's/insights.json' }),
    ).rejects.toMatchObject({
      type: 'KeyError',
      nonRetryable: true,
    });
    expect(store.withBucket('results-bucket').writes).toEqual([]);
  });
});

describe('publish (after the insights stage) and writeError: invalid documents and errors', () => {
  it('a document that fails its schema is InvalidResultDocument, naming the field; a bad staged part is InvalidStepInput', async () => {
    const store = staged();
    const { insightsKey } = await createInsightsActivities({ store }).computeInsights({
      callId: 'call-1',
      timelineKey: input.timelineKey,
      durationSeconds: facts.audio.durationSeconds,
      outputKey: 's/insights.json',
    });
    const { publishResult } = withFailureBoundary(createResultActivities({ store }), () => 1);
    await expect(
      publishResult({ ...input, insightsKey, stepFailures: [{ step: 'translate', reason: 'x' }] }),
    ).rejects.toMatchObject({
      type: 'InvalidResultDocument',
      nonRetryable: true,
      message: expect.stringMatching(/^result\.json: stepFailures\.0\.step: /),
    });
    store.objects.set('s/keywords.json', JSON.stringify({ step: 'keywords', callId: 'call-1' }));
    await expect(publishResult({ ...input, insightsKey })).rejects.toMatchObject({
      type: 'InvalidStepInput',
      nonRetryable: true,
    });
    expect(store.withBucket('results-bucket').writes).toEqual([]);
  });

  it('writeError writes a valid error.json with stage and reason in the store’s bucket for a plain prefix', async () => {
    const store = staged();
    const { writeError } = createResultActivities({ store });
    const out = await writeError({
      callId: 'call-1',
      output: callOutputKeys({ bucket: 'staging', prefix: 'results' }, 'call-1'),
      source: { bucket: 'in', key: 'bad.wav' },
      stage: 'probe',
      reason: 'not an audio file: invalid data found when processing input',
    });
    expect(out).toEqual({ bucket: 'staging', errorKey: 'results/call-1/error.json' });
    const doc = errorDocumentSchema.parse(store.json('results/call-1/error.json'));
    expect(doc).toMatchObject({
      schemaVersion: 2,
      callId: 'call-1',
      stage: 'probe',
      source: { uri: 's3://in/bad.wav', bucket: 'in', key: 'bad.wav' },
    });
    expect(doc.reason).toMatch(/not an audio file/);
    expect(Date.parse(doc.writtenAt)).not.toBeNaN();
    expect(doc).not.toHaveProperty('at');
  });

  it('buildErrorDocument: an empty reason is `unknown`; a stage outside STAGES is refused', () => {
    const parts = {
      callId: 'c',
      source: { bucket: 'in', key: 'x.wav' },
      stage: 'probe' as const,
      reason: '',
    };
    expect(buildErrorDocument({ ...parts, writtenAt: '2026-11-22T00:00:00.000Z' })).toEqual({
      schemaVersion: 2,
      callId: 'c',
      source: { uri: 's3://in/x.wav', bucket: 'in', key: 'x.wav' },
      stage: 'probe',
      reason: 'unknown',
      writtenAt: '2026-11-22T00:00:00.000Z',
    });
    expect(() => buildErrorDocument({ ...parts, stage: 'probing' as Stage })).toThrow(/stage/);
  });
});
