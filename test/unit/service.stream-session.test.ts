import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceClient } from '../../service/client.ts';
import { ServiceError } from '../../service/errors.ts';
import type { StreamEvent, StreamRecognitionOptions } from '../../service/stream-session.ts';
import {
  fakeConfig,
  startFakeServer,
  TEST_TOKEN,
  tokenAnswer,
  type FakeAnswer,
  type FakeServer,
  type RecordedRequest,
} from './service.fake-server.ts';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface FakeAsrOptions {
  /** Answer for audio chunk i (0-based) instead of the default. */
  onChunk?: (i: number, req: RecordedRequest) => FakeAnswer | undefined;
  stopAnswer?: FakeAnswer;
  responseDelayMs?: number;
}

/**
 * A scripted stream recognizer: checks Unique-ID and the rotating token cookie like spec 02, and
 * recognizes a "sentence" in chunk 2 (0.5–0.7 s of the session) and chunk 6 (1.5–1.6 s).
 */
function fakeAsr(options: FakeAsrOptions = {}) {
  let issued = 0;
  let chunk = 0;
  const problems: string[] = [];
  const rotate = () => ({ 'set-cookie': [`token=c${++issued}; Path=/`] });
  const handler = (req: RecordedRequest): FakeAnswer => {
    if (req.path.includes('/oauth/')) return tokenAnswer();
    if (req.headers.authorization !== `Bearer ${TEST_TOKEN}`) problems.push('authorization');
    const type = req.headers['content-type'] ?? '';
    if (type.startsWith('application/json')) {
      const body = JSON.parse(req.body.toString()) as { msg: { msgname: string } };
      if (body.msg.msgname === 'start') {
        return {
          status: 200,
          headers: { 'set-cookie': [`token=c${++issued}; Path=/`, 'LBID=node-3; Path=/'] },
          body: [{ msg: { msgname: 'started', uniqueId: 'uid-1' } }],
        };
      }
      if (body.msg.msgname === 'stop') {
        return (
          options.stopAnswer ?? {
            status: 200,
            headers: rotate(),
            body: [
              { msg: { msgname: 'recognized', uniqueId: 'uid-1' }, result: { type: 2, sentence: [] } },
              { msg: { msgname: 'completed', uniqueId: 'uid-1', cause: 'STOP' } },
            ],
          }
        );
      }
      return {
        status: 200,
        headers: rotate(),
        body: [{ msg: { msgname: 'completed', uniqueId: 'uid-1', cause: 'CANCEL' } }],
      };
    }
    if (req.headers['unique-id'] !== 'uid-1') problems.push(`unique-id ${req.headers['unique-id']}`);
    if (req.headers.cookie !== `token=c${issued}; LBID=node-3`)
      problems.push(`cookie ${req.headers.cookie} at ${issued}`);
    const i = chunk++;
    const custom = options.onChunk?.(i, req);
    if (custom) return custom;
    const delayMs = options.responseDelayMs;
    if (i === 2) {
      return {
        status: 200,
        headers: rotate(),
        delayMs,
        body: [
          { msg: { msgname: 'speechStartDetected', uniqueId: 'uid-1' }, timeinfo: { startDetectTime: 500 } },
          { msg: { msgname: 'speechEndDetected', uniqueId: 'uid-1' }, timeinfo: { endDetectTime: 700 } },
          {
            msg: { msgname: 'recognized', uniqueId: 'uid-1' },
            result: {
              type: 1,
              sentence: [{ surface: 'もしもし', score: 0.9, startTime: 0.5, endTime: 0.7 }],
            },
          },
          { msg: { msgname: 'recognized', uniqueId: 'uid-1' }, result: { type: 2, sentence: [] } },
        ],
      };
    }
    if (i === 6) {
      return {
        status: 200,
        headers: rotate(),
        delayMs,
        body: [
          {
            msg: { msgname: 'recognized', uniqueId: 'uid-1' },
            result: { type: 1, sentence: [{ surface: 'はい', score: 0.8, startTime: 1.5, endTime: 1.6 }] },
          },
        ],
      };
    }
    return { status: 204, headers: rotate(), delayMs };
  };
  return { handler, problems, chunks: () => chunk };
}

const audio = (bytes: number) => Readable.from([Buffer.alloc(bytes, 0xff)]);
const audioRequests = (s: FakeServer) =>
  s.requests.filter((r) => r.headers['content-type'] === 'application/octet-stream');
const jsonRequests = (s: FakeServer, name: string) =>
  s.requests.filter(
    (r) =>
      r.headers['content-type']?.startsWith('application/json') && r.body.toString().includes(`"${name}"`),
  );

async function run(
  fake: ReturnType<typeof fakeAsr>,
  opts: Partial<StreamRecognitionOptions> & { audio: StreamRecognitionOptions['audio'] },
) {
  server = await startFakeServer(fake.handler);
  const client = createServiceClient(fakeConfig(server.url, { speed: 100 }));
  return client.recognizeStream(opts);
}

describe('StreamSession: protocol', () => {
  it('start, 240 ms chunks, Unique-ID, rotating cookies, 200 and 204, stop and completed', async () => {
    const fake = fakeAsr();
    const finals: string[] = [];
    const progress: number[] = [];
    const session = await run(fake, {
      audio: audio(1920 * 9 + 100),
      callbacks: {
        onFinal: (u) => finals.push(u.text),
        onProgress: (p) => progress.push(p.audioSecondsSent),
      },
    });
    const summary = await session.done;
    expect(fake.problems).toEqual([]);
    const start = JSON.parse(
      server!.requests.find((r) => r.body.toString().includes('"start"'))!.body.toString(),
    ) as Record<string, unknown>;
    expect(start).toEqual({
      msg: { msgname: 'start' },
      param: {
        'baseParam.samplingRate': 8000,
        'recognizeParameter.domainId': 'abcd1234',
        'baseParam.audioCodec': 'mulaw',
      },
    });
    expect(server!.requests[1]!.path).toBe('/api/dev/asr/v1/speech_recognition/ja-gen_tf-08');
    expect(audioRequests(server!).map((r) => r.body.byteLength)).toEqual([...Array(9).fill(1920), 100]);
    expect(audioRequests(server!)[0]!.headers.connection).toMatch(/keep-alive/i);
    expect(jsonRequests(server!, 'stop')).toHaveLength(1);
    expect(finals).toEqual(['もしもし', 'はい']);
    expect(progress).toHaveLength(10);
    expect(progress.at(-1)).toBeCloseTo((1920 * 9 + 100) / 8000, 6);
    expect(summary).toMatchObject({
      uniqueId: 'uid-1',
      stopCause: 'end-of-audio',
      completedCause: 'STOP',
      startOffsetSeconds: 0,
      cost: { requests: 1 + 1 + 10 + 1, retries: 0, bytesSent: expect.any(Number) },
    });
    expect(summary.cost.bytesSent).toBeGreaterThan(1920 * 9 + 100);
    expect(summary.results.map((r) => [r.text, r.startSeconds, r.endSeconds])).toEqual([
      ['もしもし', 0.5, 0.7],
      ['はい', 1.5, 1.6],
    ]);
  });

  it('resume: times are reported on the original timeline', async () => {
    const fake = fakeAsr();
    const events: StreamEvent[] = [];
    const session = await run(fake, { audio: audio(1920 * 8), startOffsetSeconds: 100.24 });
    for await (const event of session) events.push(event);
    const summary = await session.done;
    expect(summary.results.map((r) => [r.startSeconds, r.endSeconds])).toEqual([
      [100.74, 100.94],
      [101.74, 101.84],
    ]);
    expect(events.find((e) => e.type === 'speechStartDetected')).toEqual({
      type: 'speechStartDetected',
      atSeconds: 100.74,
    });
    expect(events.find((e) => e.type === 'speechEndDetected')).toEqual({
      type: 'speechEndDetected',
      atSeconds: 100.94,
    });
    expect(events[0]).toEqual({ type: 'started', uniqueId: 'uid-1' });
    expect(events.at(-1)).toEqual({ type: 'completed', cause: 'STOP' });
    expect(summary.endOffsetSeconds).toBeCloseTo(100.24 + 1.92, 6);
  });
});

describe('StreamSession: pacing and errors', () => {
  it('paces to real time ÷ speed and sends each chunk only after the previous response', async () => {
    const fake = fakeAsr({ responseDelayMs: 15 });
    server = await startFakeServer(fake.handler);
    const client = createServiceClient(fakeConfig(server.url, { speed: 8 })); // 30 ms per chunk
    await client.recognizeStream({ audio: audio(1920 * 8) }).done;
    const times = audioRequests(server).map((r) => r.at);
    expect(times).toHaveLength(8);
    // Only lower bounds, which a slower machine cannot break (how much later a loaded machine sends is
    // not the client's rule; that late timers do not accumulate is the Pacer's unit test, on a fake clock):
    // - each chunk only after the previous response, which the server sends 15 ms after the request came
    //   (a timer may fire up to 1 ms early);
    for (let n = 1; n < times.length; n += 1) expect(times[n]! - times[n - 1]!).toBeGreaterThanOrEqual(14);
    // - never ahead of real time ÷ speed: chunk n leaves n × 30 ms after the first one at the earliest,
    //   which itself leaves after the start request came in.
    const startedAt = jsonRequests(server, 'start')[0]!.at;
    times.forEach((t, n) => expect(t - startedAt).toBeGreaterThanOrEqual(n * 30 - 1));
    const slow = fakeAsr({ responseDelayMs: 60 });
    await server.close();
    server = await startFakeServer(slow.handler);
    const client2 = createServiceClient(fakeConfig(server.url, { speed: 8 }));
    await client2.recognizeStream({ audio: audio(1920 * 4) }).done;
    const t2 = audioRequests(server).map((r) => r.at);
    for (let i = 1; i < t2.length; i += 1) expect(t2[i]! - t2[i - 1]!).toBeGreaterThanOrEqual(59);
  });

  it('a mid-stream recognition error rejects with a session error and progress says where to resume', async () => {
    const fake = fakeAsr({
      onChunk: (i) =>
        i === 4
          ? {
              status: 400,
              body: [
                {
                  msg: { msgname: 'completed', uniqueId: 'uid-1' },
                  errorinfo: {
                    code: 412,
                    message: 'Interval Too Brief',
                    level: 'E',
                    detail: 'audio transmission interval is too short',
                  },
                },
              ],
            }
          : undefined,
    });
    const session = await run(fake, { audio: audio(1920 * 10) });
    const err = (await session.done.catch((e: unknown) => e)) as ServiceError;
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({
      kind: 'session',
      code: 412,
      httpStatus: 400,
      endpoint: '/asr/v1/speech_recognition/ja-gen_tf-08',
    });
    expect(err.cost?.requests).toBe(1 + 1 + 5);
    const progress = session.progress();
    expect(progress.audioSecondsSent).toBeCloseTo(4 * 0.24, 6);
    expect(progress.lastFinalEndSeconds).toBe(0.7);
    // The service ended the session: no stop and no cancel follow.
    expect(jsonRequests(server!, 'stop')).toHaveLength(0);
    expect(jsonRequests(server!, 'cancel')).toHaveLength(0);
    // The iterator ends with the same error.
    const iterated = await (async () => {
      try {
        for await (const _ of session) void _;
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(iterated).toBe(err);
  });
});

describe('StreamSession: endings', () => {
  it('a completed message with errorinfo inside a 200 is a session error', async () => {
    const fake = fakeAsr({
      onChunk: (i) =>
        i === 1
          ? {
              status: 200,
              body: [
                {
                  msg: { msgname: 'completed', uniqueId: 'uid-1', cause: 'ERROR' },
                  errorinfo: { code: 551, message: 'Recognition Timeout' },
                },
              ],
            }
          : undefined,
    });
    const session = await run(fake, { audio: audio(1920 * 5) });
    await expect(session.done).rejects.toMatchObject({ kind: 'session', code: 551 });
  });

  it('a stop answered without completed is a session error', async () => {
    const fake = fakeAsr({ stopAnswer: { status: 204 } });
    const session = await run(fake, { audio: audio(1920 * 3) });
    await expect(session.done).rejects.toMatchObject({ kind: 'session', detail: 'no completed after stop' });
  });

  it('stops at the session limit with cause max-duration', async () => {
    const fake = fakeAsr();
    const session = await run(fake, { audio: audio(1920 * 10), maxSessionSeconds: 1.2 });
    const summary = await session.done;
    expect(summary.stopCause).toBe('max-duration');
    expect(summary.audioSecondsSent).toBeCloseTo(1.2, 6);
    expect(audioRequests(server!)).toHaveLength(5);
    expect(jsonRequests(server!, 'stop')).toHaveLength(1);
  });

  it('ends normally (not max-duration) when the audio is exactly the limit', async () => {
    const session = await run(fakeAsr(), { audio: audio(1920 * 5), maxSessionSeconds: 1.2 });
    expect((await session.done).stopCause).toBe('end-of-audio');
  });
});

describe('StreamSession: cancellation and timeouts', () => {
  it('cancel() sends a cancel request after the request in flight and resolves with the results so far', async () => {
    const fake = fakeAsr();
    server = await startFakeServer(fake.handler);
    const client = createServiceClient(fakeConfig(server.url, { speed: 20 }));
    const session = client.recognizeStream({
      audio: audio(1920 * 50),
      callbacks: { onFinal: () => session.cancel() },
    });
    const summary = await session.done;
    expect(summary.stopCause).toBe('cancelled');
    expect(summary.results).toHaveLength(1);
    expect(audioRequests(server)).toHaveLength(3);
    expect(jsonRequests(server, 'cancel')).toHaveLength(1);
    expect(jsonRequests(server, 'stop')).toHaveLength(0);
  });

  it('an AbortSignal rejects with its reason and cancels the session on the service', async () => {
    const fake = fakeAsr();
    server = await startFakeServer(fake.handler);
    const client = createServiceClient(fakeConfig(server.url, { speed: 20 }));
    const controller = new AbortController();
    const session = client.recognizeStream({
      audio: audio(1920 * 50),
      signal: controller.signal,
      callbacks: { onFinal: () => controller.abort(new Error('worker shutting down')) },
    });
    await expect(session.done).rejects.toThrow('worker shutting down');
    expect(jsonRequests(server, 'cancel')).toHaveLength(1);
    expect(audioRequests(server).length).toBeLessThan(6);
  });

  it('a request timeout is a transient error', async () => {
    const fake = fakeAsr({ onChunk: (i) => (i === 1 ? { status: 204, delayMs: 500 } : undefined) });
    const session = await run(fake, { audio: audio(1920 * 4), requestTimeoutMs: 100 });
    await expect(session.done).rejects.toMatchObject({
      kind: 'transient',
      detail: 'no answer within 100 ms',
    });
  });

  it('invalid start parameters fail before any request; empty audio makes no request', async () => {
    const fake = fakeAsr();
    const bad = await run(fake, { audio: audio(1920), codec: 'mulaw', sampleRate: 16000 });
    await expect(bad.done).rejects.toMatchObject({ kind: 'invalid' });
    const client = createServiceClient(fakeConfig(server!.url, { speed: 100 }));
    const empty = await client.recognizeStream({ audio: Readable.from([]) }).done;
    expect(empty).toMatchObject({ stopCause: 'end-of-audio', results: [], cost: { requests: 0 } });
    expect(server!.requests).toHaveLength(0);
  });
});

describe('StreamSession: connections, formats and limits', () => {
  it('keeps connections alive: 8 concurrent sessions of 20 chunks reuse a few sockets', async () => {
    const fake = fakeAsr();
    server = await startFakeServer(fake.handler);
    const client = createServiceClient(fakeConfig(server.url, { speed: 100 }));
    await Promise.all(
      Array.from({ length: 8 }, () => client.recognizeStream({ audio: audio(1920 * 20) }).done),
    );
    expect(audioRequests(server)).toHaveLength(160);
    // 8 × (start + 20 audio + stop) + 1 token = 177 requests over at most two sockets per session
    // (the pool grows while the concurrent starts race), not one socket per request.
    expect(server.connections()).toBeLessThanOrEqual(2 * 8 + 1);
  });

  it('16 kHz PCM goes in 7,680-byte requests', async () => {
    const fake = fakeAsr();
    const session = await run(fake, {
      audio: audio(7680 * 3),
      model: 'ja-gen_tf-16',
      codec: 'pcm',
      sampleRate: 16000,
    });
    await session.done;
    expect(audioRequests(server!).map((r) => r.body.byteLength)).toEqual([7680, 7680, 7680]);
  });

  it('the per-process session limit queues sessions', async () => {
    const fake = fakeAsr();
    server = await startFakeServer(fake.handler);
    const client = createServiceClient(fakeConfig(server.url, { speed: 100 }), {
      concurrency: { asrSessions: 1 },
    });
    const a = client.recognizeStream({ audio: audio(1920 * 3) });
    const b = client.recognizeStream({ audio: audio(1920 * 3) });
    await Promise.all([a.done, b.done]).catch(() => undefined);
    // The second start is sent only after the first session's stop.
    const names = server.requests
      .filter((r) => r.headers['content-type']?.startsWith('application/json') && !r.path.includes('oauth'))
      .map((r) => (JSON.parse(r.body.toString()) as { msg: { msgname: string } }).msg.msgname);
    expect(names).toEqual(['start', 'stop', 'start', 'stop']);
  });
});
