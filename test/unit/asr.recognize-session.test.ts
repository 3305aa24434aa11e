/**
 * recognizeSession's failures, with a fake service and store (no emulator): each leaves the activity
 * as the retry table's type, and no loop in it multiplies Temporal's attempts.
 */
import { Readable } from 'node:stream';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createAsrActivities } from '../../activities/asr/asr-activities.ts';
import { createCheckpointBook } from '../../activities/asr/checkpoint-book.ts';
import { heartbeatIntervalMs } from '../../activities/asr/heartbeat-interval.ts';
import type { ServiceClient } from '../../service/index.ts';
import { ServiceError, type ServiceErrorKind } from '../../service/index.ts';
import { asRetry, MemoryStore } from './nlp.helpers.ts';

/** A service whose every stream fails with `kind` after one final result, counting the streams. */
function failingService(kind: ServiceErrorKind) {
  let streams = 0;
  const service = {
    recognizeStream(opts: Parameters<ServiceClient['recognizeStream']>[0]) {
      streams += 1;
      const at = opts.startOffsetSeconds ?? 0;
      opts.callbacks?.onFinal?.({
        startSeconds: at + 0.5,
        endSeconds: at + 1,
        text: `phrase ${streams}`,
        alternatives: [],
      } as never);
      return { done: Promise.reject(new ServiceError({ kind, message: `${kind} error` })) };
    },
  } as unknown as ServiceClient;
  return { service, streams: () => streams };
}

/** A store that serves the session's audio and can refuse the session result's write. */
class AudioStore extends MemoryStore {
  resultWrites = 0;
  private readonly refuseResult;
  constructor(refuseResult = false) {
    super('staging');
    this.refuseResult = refuseResult;
  }
  override async getStream(): Promise<Readable> {
    return Readable.from([Buffer.alloc(8000)]);
  }
  override async put(key: string, body: string | Buffer): Promise<void> {
    if (key === 'sessions/0000.json') {
      this.resultWrites += 1;
      if (this.refuseResult) throw Object.assign(new Error('connect ECONNREFUSED'), { $metadata: {} });
    }
    await super.put(key, body);
  }
}

const input = {
  callId: 'call-1',
  session: 0,
  audioKey: 'audio/0.mulaw',
  start: 0,
  end: 60,
  resultKey: 'sessions/0000.json',
  maxRestarts: 3,
};

describe('recognizeSession failures: session errors', () => {
  it('a session error restarts the session up to the budget, then fails non-retryably', async () => {
    const { service, streams } = failingService('session');
    const store = new AudioStore();
    const asr = createAsrActivities({
      service,
      store,
      slowestPace: 100,
      model: 'ja-gen_tf-08',
      restartDelayMs: 0,
    });
    await expect(asr.recognizeSession(input)).rejects.toMatchObject({
      type: 'RecognitionRestartsExhausted',
      nonRetryable: true,
    });
    expect(streams()).toBe(4); // the first session and 3 restarts
    // The budget is staged with the partial results: a retried attempt does not get 3 more.
    const again = failingService('session');
    const retried = createAsrActivities({
      service: again.service,
      store,
      slowestPace: 100,
      model: 'x',
      restartDelayMs: 0,
    });
    await expect(asRetry(() => retried.recognizeSession(input))).rejects.toMatchObject({
      type: 'RecognitionRestartsExhausted',
    });
    expect(again.streams()).toBe(1);
  });

  it.each([
    ['auth', 'ServiceAuthFailed', true],
    ['invalid', 'ServiceInvalidRequest', true],
    ['quota', 'ServiceQuotaExhausted', false],
  ] as const)(
    'a %s error is no reason for a new session: %s (non-retryable: %s)',
    async (kind, type, nonRetryable) => {
      const { service, streams } = failingService(kind);
      const asr = createAsrActivities({
        service,
        store: new AudioStore(),
        slowestPace: 100,
        model: 'x',
        restartDelayMs: 0,
      });
      await expect(asr.recognizeSession(input)).rejects.toMatchObject({ type, nonRetryable });
      expect(streams()).toBe(1);
    },
  );
});

describe('recognizeSession failures: a busy service and unwritable results', () => {
  it('550 No Resource waits and starts again without spending a restart', async () => {
    let streams = 0;
    const service = {
      recognizeStream(opts: Parameters<ServiceClient['recognizeStream']>[0]) {
        streams += 1;
        if (streams <= 2)
          return {
            done: Promise.reject(new ServiceError({ kind: 'noResource', code: 550, message: 'No Resource' })),
          };
        opts.callbacks?.onFinal?.({
          startSeconds: 1,
          endSeconds: 2,
          text: 'はい',
          alternatives: [],
        } as never);
        return {
          done: Promise.resolve({ audioSecondsSent: 60, cost: { requests: 250, retries: 0 }, results: [] }),
        };
      },
    } as unknown as ServiceClient;
    const store = new AudioStore();
    // maxRestarts 0: a restart would fail the session at once.
    const asr = createAsrActivities({ service, store, slowestPace: 100, model: 'x', random: () => 0 });
    const out = await asr.recognizeSession({ ...input, maxRestarts: 0 });
    expect(streams).toBe(3);
    expect(out).toMatchObject({ restarts: 0, utterances: 1, reused: false });
    const result = JSON.parse(await store.getText(input.resultKey)) as { restartReasons: string[] };
    expect(result.restartReasons).toEqual([]);
  });

  it('a finished session whose result cannot be written gives up after its write budget, non-retryably', async () => {
    const service = {
      recognizeStream: () => ({
        done: Promise.resolve({ audioSecondsSent: 60, cost: { requests: 250, retries: 0 }, results: [] }),
      }),
    } as unknown as ServiceClient;
    const store = new AudioStore(true);
    const asr = createAsrActivities({
      service,
      store,
      slowestPace: 100,
      model: 'x',
      resultWriteBudgetMs: 600,
    });
    await expect(asr.recognizeSession(input)).rejects.toMatchObject({
      type: 'SessionResultUnwritten',
      nonRetryable: true,
    });
    expect(store.resultWrites).toBeGreaterThan(1);
  });
});

describe('heartbeatIntervalMs', () => {
  it('leaves 30 s under a long heartbeat timeout: the session budget, not heartbeats, finds a lost worker', () => {
    expect(heartbeatIntervalMs(150_000)).toBe(120_000);
    expect(heartbeatIntervalMs(120_000)).toBe(90_000);
  });

  it('is a sixth of a short heartbeat timeout, within 0.2–5 s (the SDK sends one per 80 % of it)', () => {
    expect(heartbeatIntervalMs(30_000)).toBe(5000);
    expect(heartbeatIntervalMs(6000)).toBe(1000);
    expect(heartbeatIntervalMs(600)).toBe(200);
    // No heartbeat timeout (a test's context): the longest interval.
    expect(heartbeatIntervalMs(undefined)).toBe(5000);
  });
});

/**
 * A service whose one stream recognizes a final result ending at each of `ends`, a turn of the event
 * loop apart (as a stream's results come), and then ends well.
 */
function scriptedService(ends: number[]) {
  const service = {
    recognizeStream(opts: Parameters<ServiceClient['recognizeStream']>[0]) {
      const done = (async () => {
        for (const end of ends) {
          await new Promise((resolve) => setImmediate(resolve));
          opts.callbacks?.onProgress?.({ positionSeconds: end } as never);
          opts.callbacks?.onFinal?.({
            startSeconds: end - 1,
            endSeconds: end,
            text: `phrase at ${end}`,
            alternatives: [],
          } as never);
        }
        return { audioSecondsSent: 120, cost: { requests: 500 } };
      })();
      return { done };
    },
  } as unknown as ServiceClient;
  return service;
}

describe('recognizeSession staging and heartbeats', () => {
  const long = { ...input, end: 120 };

  it('stages partial results only after 30 s of newly recognized audio, on a final result', async () => {
    const store = new AudioStore();
    // Finals every 5 s, and none in a silence from 70 to 115 s.
    const ends = [5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 115, 118];
    const book = createCheckpointBook(store);
    const asr = createAsrActivities({
      service: scriptedService(ends),
      store,
      slowestPace: 100,
      model: 'x',
      checkpoints: book,
    });
    const out = await asr.recognizeSession(long);
    expect(out.utterances).toBe(ends.length);
    const partials = store.writes.filter((w) => w !== `staging/${long.resultKey}`);
    // At 30 s and 60 s of audio, then at 115 s after the silence: never on time alone; all of them to
    // this process's checkpoint of the call, none to the session's own key (it finished).
    expect(partials).toHaveLength(3);
    expect(new Set(partials)).toEqual(new Set([`staging/checkpoints/${book.writerId}.json`]));
    const staged = JSON.parse(store.objects.get(`checkpoints/${book.writerId}.json`)!) as {
      sessions: Record<string, { resumeAt: number }>;
    };
    expect(staged.sessions['0']!.resumeAt).toBe(115);
  });

  it('sends no heartbeat in a session shorter than its interval under a long heartbeat timeout', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 150_000 } as never);
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    const asr = createAsrActivities({
      service: scriptedService([5, 10, 15]),
      store: new AudioStore(),
      slowestPace: 100,
      model: 'x',
    });
    await env.run(asr.recognizeSession, long);
    expect(beats).toEqual([]);
  });

  it('a first attempt looks up no kept progress; a retried one resumes where the call checkpoint ends', async () => {
    /** A store holding another process's checkpoint of the session at 45 s, counting lookups. */
    async function storeWithCheckpoint() {
      const store = new AudioStore();
      const lookups = { list: 0, read: 0 };
      const { listPage, read } = store;
      store.listPage = (prefix: string) => ((lookups.list += 1), listPage.call(store, prefix));
      store.read = (key: string) => ((lookups.read += 1), read.call(store, key));
      const state = {
        resumeAt: 45,
        utterances: [{ start: 44, end: 45, text: 'kept' }],
        audioSecondsSent: 50,
        restarts: 0,
        reStreamedSeconds: 0,
        requests: 200,
        restartReasons: [],
      };
      await createCheckpointBook(store, 'crashed').enter(long, state).stage(true);
      return { store, lookups };
    }
    const starts: number[] = [];
    const service = scriptedService([110, 118]);
    const recognizeStream = service.recognizeStream.bind(service);
    service.recognizeStream = (opts) => (starts.push(opts.startOffsetSeconds ?? 0), recognizeStream(opts));

    const first = await storeWithCheckpoint();
    const fresh = createAsrActivities({ service, store: first.store, slowestPace: 100, model: 'x' });
    expect((await fresh.recognizeSession(long)).utterances).toBe(2);
    expect(first.lookups).toEqual({ list: 0, read: 0 });

    const second = await storeWithCheckpoint();
    const retried = createAsrActivities({ service, store: second.store, slowestPace: 100, model: 'x' });
    expect((await asRetry(() => retried.recognizeSession(long))).utterances).toBe(3);
    expect(second.lookups.list).toBe(1);
    // The first attempt streamed from the start; the retry from the request grid just before 45 s.
    expect(starts[0]).toBe(0);
    expect(starts[1]).toBeCloseTo(44.88, 6);
  });
});
