/**
 * Fakes for the unit tests of the text activities and the result writer: an in-memory ObjectStore
 * (records the order of writes) and a scriptable ServiceClient whose NLP calls answer like the
 * emulator (its filler remover and named-entity extraction are reused) and fail on demand with real
 * ServiceErrors.
 */
import { detectMisrecognition } from '../../emulator/nlp/misrecognition.ts';
import { createHash } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Readable } from 'node:stream';
import { extractNamedEntities } from '../../emulator/nlp/named-entities.ts';
import { removeFiller } from '../../emulator/nlp/remove-filler.ts';
import { classifySentence } from '../../emulator/nlp/sentence-type.ts';
import type { ObjectStore } from '../../activities/storage/object-store.ts';
import { CostMeter, ServiceError, type ServiceClient, type ServiceErrorKind } from '../../service/index.ts';
import type { NlpCallOptions } from '../../service/index.ts';
import type { FillerRemovalResult } from '../../schemas/service-nlp.ts';
import type { Timeline, Utterance } from '../../schemas/transcript.ts';
import { createNlpActivities } from '../../activities/nlp/nlp-activities.ts';

const etagOf = (text: string) => createHash('md5').update(text).digest('hex');

export class MemoryStore implements ObjectStore {
  readonly objects = new Map<string, string>();
  /** Every put, in order: `bucket/key`. */
  readonly writes: string[] = [];

  readonly bucket;
  private readonly buckets;
  constructor(bucket = 'staging', buckets = new Map<string, MemoryStore>()) {
    this.bucket = bucket;
    this.buckets = buckets;
    buckets.set(bucket, this);
  }

  async put(key: string, body: string | Buffer): Promise<void> {
    this.objects.set(key, body.toString());
    this.writes.push(`${this.bucket}/${key}`);
  }
  async putFile(): Promise<void> {
    throw new Error('not in the fake');
  }
  async getText(key: string): Promise<string> {
    const text = this.objects.get(key);
    if (text === undefined) throw Object.assign(new Error(`NoSuchKey ${key}`), { name: 'NoSuchKey' });
    return text;
  }
  async getBuffer(key: string): Promise<Buffer> {
    return Buffer.from(await this.getText(key));
  }
  async getStream(): Promise<Readable> {
    throw new Error('not in the fake');
  }
  async download(): Promise<void> {
    throw new Error('not in the fake');
  }
  async head(key: string) {
    const text = this.objects.get(key);
    return text === undefined ? undefined : { key, size: Buffer.byteLength(text) };
  }
  async read(key: string) {
    const text = this.objects.get(key);
    return text === undefined ? undefined : { body: Buffer.from(text), etag: etagOf(text) };
  }
  async putIf(key: string, body: string | Buffer, condition: { ifNoneMatch: '*' } | { ifMatch: string }) {
    const current = this.objects.get(key);
    const holds =
      'ifMatch' in condition
        ? current !== undefined && etagOf(current) === condition.ifMatch
        : current === undefined;
    if (!holds) return 'conflict' as const;
    await this.put(key, body);
    return { etag: etagOf(body.toString()) };
  }
  async deleteKeys(keys: readonly string[]): Promise<number> {
    for (const key of keys) this.objects.delete(key);
    return keys.length;
  }
  async exists(key: string): Promise<boolean> {
    return this.objects.has(key);
  }
  async listPage(prefix: string) {
    return {
      objects: [...this.objects.keys()].filter((k) => k.startsWith(prefix)).map((key) => ({ key, size: 0 })),
    };
  }
  async deletePrefix(prefix: string): Promise<number> {
    let n = 0;
    for (const key of [...this.objects.keys()]) {
      if (key.startsWith(prefix)) {
        this.objects.delete(key);
        n++;
      }
    }
    return n;
  }
  async ensureBucket(): Promise<void> {}
  withBucket(bucket: string): MemoryStore {
    return this.buckets.get(bucket) ?? new MemoryStore(bucket, this.buckets);
  }
  json(key: string): unknown {
    return JSON.parse(this.objects.get(key)!);
  }
}

export function utterance(
  index: number,
  speaker: string,
  start: number,
  end: number,
  text: string,
): Utterance {
  return { index, speaker, track: speaker === 'agent' ? 0 : 1, session: 0, start, end, text };
}

export function timeline(utterances: Utterance[], durationSeconds = 100): Timeline {
  return { callId: 'call-1', durationSeconds, speakers: ['agent', 'customer'], utterances };
}

export const SAMPLE_UTTERANCES: Utterance[] = [
  utterance(0, 'agent', 0.5, 3.2, 'お電話ありがとうございます。カスタマーセンターの佐藤でございます。'),
  utterance(1, 'customer', 3.8, 6.0, 'えーっと、あの、請求書の件で電話しました'),
  utterance(2, 'agent', 6.5, 9.0, 'えー、ご契約者様ご本人でいらっしゃいますか。'),
  utterance(3, 'customer', 9.4, 10.1, 'はい'),
  utterance(4, 'customer', 40.0, 45.0, 'うーん、ちょっと困っているんです！'),
  utterance(5, 'agent', 80.0, 86.0, 'ありがとうございました。'),
];

export interface FakeCall {
  endpoint:
    | 'removeFiller'
    | 'summarize'
    | 'sentiment'
    | 'keyword'
    | 'namedEntities'
    | 'sentenceType'
    | 'classify'
    | 'detectMisrecognition'
    | 'listModels';
  input: unknown;
  options?: unknown;
}

type Failure = { kind: ServiceErrorKind; code?: number; retryAfterMs?: number } | undefined;

/**
 * A ServiceClient whose NLP calls answer locally. `failNext(...)` queues failures for the next calls
 * of an endpoint (or of any); each call counts one request into the caller's meter, like the client.
 */
export class FakeService {
  readonly calls: FakeCall[] = [];
  private readonly failures: { endpoint?: FakeCall['endpoint']; failure: Failure }[] = [];
  /** Replaces remove_filler's answer (e.g. to join sentences across utterances). */
  removeFillerOverride?: (text: string) => ReturnType<typeof removeFiller> | undefined;

  /** Calls whose 1-based number (counted over every endpoint) is in `numbers` fail with `failure`. */
  failCalls(numbers: number[], failure: NonNullable<Failure>): void {
    this.failingCalls = { numbers: new Set(numbers), failure };
  }
  private failingCalls: { numbers: Set<number>; failure: NonNullable<Failure> } | undefined;

  failNext(failure: NonNullable<Failure>, times = 1, endpoint?: FakeCall['endpoint']): void {
    for (let i = 0; i < times; i++) this.failures.push({ endpoint, failure });
  }

  private async answer<T>(call: FakeCall, options: NlpCallOptions | undefined, result: () => T) {
    this.calls.push(call);
    const meter = new CostMeter(options?.meter);
    meter.addRequest(100);
    const i = this.failures.findIndex((f) => !f.endpoint || f.endpoint === call.endpoint);
    const numbered = this.failingCalls?.numbers.has(this.calls.length)
      ? this.failingCalls.failure
      : undefined;
    if (i >= 0 || numbered) {
      const failure = numbered ?? this.failures.splice(i, 1)[0]!.failure;
      throw new ServiceError({
        kind: failure!.kind,
        message: `/nlp/fake failed (${failure!.kind}${failure!.code ? ` code ${failure!.code}` : ''})`,
        code: failure!.code,
        retryAfterMs: failure!.retryAfterMs,
        endpoint: `/nlp/${call.endpoint}`,
      });
    }
    meter.addReceived(50);
    return { result: result(), cost: meter.snapshot() };
  }

  count(endpoint: FakeCall['endpoint']): number {
    return this.calls.filter((c) => c.endpoint === endpoint).length;
  }

  readonly client: ServiceClient = {
    tokens: undefined as never,
    recognizeStream: () => {
      throw new Error('not in the fake');
    },
    recognizeFile: () => {
      throw new Error('not in the fake');
    },
    userDictionary: undefined as never,
    // One model, `reasons-1`: billing when the text speaks of a bill, else outage.
    classifier: {
      learn: () => {
        throw new Error('not in the fake');
      },
      status: () => {
        throw new Error('not in the fake');
      },
      delete: () => {
        throw new Error('not in the fake');
      },
      list: (options) =>
        this.answer({ endpoint: 'listModels', input: null, options }, options, () => [
          {
            model_id: 'reasons-1',
            model_status: 'completed' as const,
            created_at: '2026-11-01T09:00:00+09:00',
          },
        ]),
      classify: (model, text, options) =>
        this.answer({ endpoint: 'classify', input: { model, text }, options }, options, () =>
          text.includes('請求')
            ? [
                { class: 'billing', score: 0.8 },
                { class: 'outage', score: 0.2 },
              ]
            : [
                { class: 'outage', score: 0.6 },
                { class: 'billing', score: 0.4 },
              ],
        ),
    },
    nlp: {
      removeFiller: (text, options) =>
        this.answer({ endpoint: 'removeFiller', input: text, options }, options, () => {
          const results =
            this.removeFillerOverride?.(text) ?? removeFiller(text, options?.doSegment ?? false);
          return results as FillerRemovalResult;
        }),
      summarize: (document, options) =>
        this.answer({ endpoint: 'summarize', input: document, options }, options, () => ({
          summary: document.split('\n')[0]!,
          levels: 1,
          windows: 1,
        })),
      sentiment: (sentence, options) =>
        this.answer({ endpoint: 'sentiment', input: sentence, options }, options, () =>
          sentence.includes('困')
            ? {
                sentiment: 'Negative' as const,
                score: 0.8,
                emotional_phrase: [{ form: '困っている', emotion: '不安,N' }],
              }
            : sentence.includes('ありがとう')
              ? {
                  sentiment: 'Positive' as const,
                  score: 0.6,
                  emotional_phrase: [{ form: 'ありがとう', emotion: 'P' }],
                }
              : { sentiment: 'Neutral' as const, score: 0.3, emotional_phrase: [] },
        ),
      keyword: (sentences, options) =>
        this.answer({ endpoint: 'keyword', input: sentences, options }, options, () =>
          [
            { form: '請求書', score: 10 },
            { form: '契約者', score: 5 },
          ].slice(0, options?.maxKeywords ?? 5),
        ),
      namedEntities: (sentence, options) =>
        this.answer({ endpoint: 'namedEntities', input: sentence, options }, options, () =>
          extractNamedEntities(sentence).map((e) => ({ ...e })),
        ),
      detectMisrecognition: (sentence, options) =>
        this.answer({ endpoint: 'detectMisrecognition', input: sentence, options }, options, () =>
          detectMisrecognition(sentence),
        ),
      sentenceType: (sentence, options) =>
        this.answer({ endpoint: 'sentenceType', input: sentence, options }, options, () => ({
          ...classifySentence(sentence),
        })),
    },
  };
}

/** The NLP activities over an in-memory store holding a timeline of `utterances`, and a fake service. */
export function nlpSetup(timelineKey: string, utterances: Utterance[] = SAMPLE_UTTERANCES) {
  const store = new MemoryStore();
  store.objects.set(timelineKey, JSON.stringify(timeline(utterances)));
  const service = new FakeService();
  const activities = createNlpActivities({
    service: service.client,
    store,
    options: { requestBaseDelayMs: 1 },
  });
  return { store, service, activities };
}

/** Runs `attempt` as Temporal's retried attempt (attempt 2): only a retry looks for kept progress. */
export function asRetry<T>(attempt: () => Promise<T>): Promise<T> {
  return new MockActivityEnvironment({ attempt: 2 }).run(attempt) as Promise<T>;
}
