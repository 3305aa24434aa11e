/**
 * A valid result.json of a call with `utterances` utterances alternating agent / customer, sentiment,
 * summary and keywords: for the tables' and pages' unit tests (validated by schemas/result.ts).
 */
import { resultDocumentSchema, type ResultDocument, type SentimentAggregate } from '../../schemas/result.ts';
import { roundSecondsToMs, roundThousandths } from '../../schemas/units.ts';

const LINES = [
  'お電話ありがとうございます。カスタマーセンターの佐藤でございます。',
  '請求書の件で電話しました。金額が違うみたいなんです。',
  'ご不便をおかけして申し訳ございません。確認いたします。',
  'ちょっと困っているんです！',
  '確認が取れました。返金の手続きをいたします。',
  'ありがとうございます。助かりました。',
];

function aggregate(values: number[]): SentimentAggregate {
  const mean = values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
  return {
    utterances: values.length,
    positive: values.filter((v) => v > 0).length,
    negative: values.filter((v) => v < 0).length,
    neutral: values.filter((v) => v === 0).length,
    meanValue: mean,
    label: mean === null ? null : mean > 0.1 ? 'Positive' : mean < -0.1 ? 'Negative' : 'Neutral',
  };
}

export interface ResultFixtureOptions {
  callId?: string;
  utterances?: number;
  /** Seconds per utterance slot (each utterance takes 80 % of it). */
  slot?: number;
  metadata?: Record<string, string>;
  lastModified?: string;
  writtenAt?: string;
  batchId?: string;
  /** Customer utterances' sentiment value (agent: +0.6). */
  customerValue?: number;
}

/** The fixture's summary, keywords and categories: the same for every call. */
const SCORED_PARTS = {
  summary: {
    text: '請求金額の誤りについての問い合わせ。返金手続きを案内した。',
    mode: 'extract-cc',
    levels: 1,
    windows: 1,
    documentChars: 200,
  },
  keywords: [
    { text: '請求書', score: 0.9 },
    { text: '返金', score: 0.7 },
  ],
  categories: [
    { name: '請求の問い合わせ', matched: true, points: [{ start: 6, end: 10, utterance: 1 }] },
    { name: '解約', matched: false, points: [] },
  ],
};

/** The fixture's scorecard: one of two questions answered yes. */
const SCORECARD = {
  name: '基本応対',
  score: 3,
  max: 4,
  normalized: 0.75,
  answers: [
    {
      id: 'greet',
      text: '名乗った',
      weight: 3,
      answer: 'yes',
      points: [{ start: 1, end: 5, utterance: 0 }],
    },
    { id: 'close', text: '締めの挨拶', weight: 1, answer: 'no', points: [] },
  ],
};

/** `n` utterances, agent and customer in turn, each `slot` seconds apart, with their fillers and sentiment. */
function fixtureUtterances(n: number, slot: number, customerValue: number) {
  return Array.from({ length: n }, (_, i) => {
    const speaker = i % 2 === 0 ? 'agent' : 'customer';
    const value = speaker === 'agent' ? 0.6 : customerValue;
    const label = value > 0 ? 'Positive' : value < 0 ? 'Negative' : 'Neutral';
    const text = LINES[i % LINES.length]!;
    return {
      index: i,
      speaker,
      track: speaker === 'agent' ? 0 : 1,
      session: 0,
      start: 1 + i * slot,
      end: 1 + i * slot + slot * 0.8,
      text,
      confidence: 0.9,
      normalizedText: text,
      cleanedText: text,
      fillers: i === 1 ? [{ text: 'えーっと、', begin: 0, end: 5 }] : [],
      sentiment: {
        label: label as 'Positive' | 'Negative' | 'Neutral',
        score: Math.abs(value),
        value,
        emotions:
          value < 0 ? [{ form: '困る', labels: ['不安', 'N'] }] : [{ form: '助かる', labels: ['安心'] }],
      },
    };
  });
}

export function resultFixture(options: ResultFixtureOptions = {}): ResultDocument {
  const callId = options.callId ?? 'call-a-1234abcd';
  const n = options.utterances ?? 6;
  const slot = options.slot ?? 5;
  const duration = Math.max(10, n * slot + 2);
  const customerValue = options.customerValue ?? -0.7;
  const utterances = fixtureUtterances(n, slot, customerValue);
  const values = (speaker?: string) =>
    utterances.filter((u) => !speaker || u.speaker === speaker).map((u) => u.sentiment.value);
  const talkOf = (speaker: string) => {
    const own = utterances.filter((u) => u.speaker === speaker);
    const talk = own.reduce((s, u) => s + (u.end - u.start), 0);
    return {
      speaker,
      utterances: own.length,
      talkSeconds: roundSecondsToMs(talk),
      silenceSeconds: roundSecondsToMs(duration - talk),
      talkShare: roundThousandths(talk / duration),
    };
  };
  const quarter = duration / 4;
  const doc = {
    schemaVersion: 2,
    callId,
    source: {
      uri: `s3://callpipe/input/${callId}.wav`,
      bucket: 'callpipe',
      key: `input/${callId}.wav`,
      etag: 'abc',
      fingerprint: 'sha256:abcd',
      ...(options.lastModified ? { lastModified: options.lastModified } : {}),
      ...(options.metadata ? { metadata: options.metadata } : {}),
    },
    audio: {
      durationSeconds: duration,
      container: 'wav',
      codec: 'pcm_s16le',
      sampleRate: 8000,
      channels: 2,
      sizeBytes: duration * 32000,
      hasVideo: false,
      tracks: [
        { track: 0, speaker: 'agent', sourceChannels: [0] },
        { track: 1, speaker: 'customer', sourceChannels: [1] },
      ],
    },
    speakers: ['agent', 'customer'],
    sessions: [],
    utterances,
    talk: {
      bySpeaker: [talkOf('agent'), talkOf('customer')],
      silenceSeconds: slot * 0.2 * n + 2,
      overlapSeconds: 0,
    },
    sentiment: {
      scoring: 'test',
      overall: aggregate(values()),
      bySpeaker: { agent: aggregate(values('agent')), customer: aggregate(values('customer')) },
      byQuarter: [1, 2, 3, 4].map((q) => ({
        quarter: q,
        start: (q - 1) * quarter,
        end: q * quarter,
        overall: aggregate(values()),
        bySpeaker: {},
      })),
    },
    ...SCORED_PARTS,
    scorecard: SCORECARD,
    processing: {
      workflowId: `wf-${callId}`,
      runId: 'run-1',
      startedAt: '2026-11-21T23:58:45.000Z',
      ...(options.batchId ? { batchId: options.batchId } : {}),
      requests: { recognition: { requests: 12, retries: 0 } },
      totalRequests: 20,
      retries: 1,
      restarts: 0,
      reStreamedSeconds: 0,
      wallSeconds: { total: 42.5 },
    },
    stepFailures: [],
    writtenAt: options.writtenAt ?? '2026-11-22T00:01:00.000Z',
  };
  return resultDocumentSchema.parse(doc);
}
