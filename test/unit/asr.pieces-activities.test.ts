/**
 * recognizePieces (activities/asr/pieces-activities.ts) with a fake service and store: pieces sent in
 * parallel on the activity's slot and the leases it is granted (given back), longest first; a 550 or a
 * 600 sends the piece again; a 652 fails the activity non-retryably with that reason; a retried attempt
 * sends only the pieces its predecessor did not keep.
 */
import { Readable } from 'node:stream';
import pLimit from 'p-limit';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createPiecesActivities, type PieceLeases } from '../../activities/asr/pieces-activities.ts';
import type { RecognizePiecesInput } from '../../activities/asr/piece-types.ts';
import { partialResultKey } from '../../schemas/call-keys.ts';
import type { ServiceClient } from '../../service/index.ts';
import { ServiceError } from '../../service/index.ts';
import { MemoryStore } from './nlp.helpers.ts';
import { localPieceLeases } from '../../workers/local-piece-leases.ts';

class AudioStore extends MemoryStore {
  ranges: { start?: number; end?: number }[] = [];
  constructor() {
    super('staging');
  }
  override async getStream(...args: unknown[]): Promise<Readable> {
    const options = (args[1] ?? {}) as { start?: number; end?: number };
    this.ranges.push(options);
    return Readable.from([Buffer.alloc((options.end ?? 0) - (options.start ?? 0) + 1)]);
  }
}

/** A service answering one utterance per piece, failing the calls listed in `failures` (by call number). */
function fakeService(failures: Record<number, ServiceError> = {}) {
  let calls = 0;
  let inFlight = 0;
  let peak = 0;
  const sent: number[] = [];
  const service = {
    async recognizeFile(opts: { audio: Uint8Array; startOffsetSeconds?: number }) {
      const n = ++calls;
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight -= 1;
      const at = opts.startOffsetSeconds ?? 0;
      sent.push(at);
      const failure = failures[n];
      if (failure) throw failure;
      const seconds = opts.audio.byteLength / 8000;
      return {
        uniqueId: `u${n}`,
        results: [
          {
            text: `piece at ${at}`,
            startSeconds: at + 0.5,
            endSeconds: at + 1.5,
            score: 0.9,
            alternatives: [],
          },
        ],
        audioSeconds: seconds,
        cost: { requests: 1, retries: 0, bytesSent: 0, bytesReceived: 0 },
        durationMs: 5,
      };
    },
  } as unknown as ServiceClient;
  return { service, sent, calls: () => calls, peak: () => peak };
}

/** An account with `free` sessions free for each ask in turn (none after the list): what `takeFree` grants. */
function countingLeases(
  ...free: number[]
): PieceLeases & { held: () => number; granted: () => number; asks: () => number } {
  let held = 0;
  let granted = 0;
  let asks = 0;
  return {
    async takeFree(count) {
      const room = free[asks] ?? 0;
      asks += 1;
      const n = Math.min(count, room);
      granted += n;
      held += n;
      return Array.from({ length: n }, (_, i) => `lease-${granted - n + i + 1}`);
    },
    release() {
      held -= 1;
    },
    held: () => held,
    granted: () => granted,
    asks: () => asks,
  };
}

const pieces = [
  { session: 0, start: 0, end: 50 },
  { session: 1, start: 50, end: 108 },
  { session: 2, start: 108, end: 130 },
  { session: 3, start: 130, end: 180 },
];
const input: RecognizePiecesInput = {
  callId: 'call-1',
  group: 0,
  audioKey: 'audio/0.mulaw',
  pieces,
  resultKey: 'sessions/pieces-0000.json',
  maxRetries: 3,
};
const noWords = async () => undefined;

describe('recognizePieces: leases and pacing', () => {
  it('sends every piece once, in parallel on its leases (all given back), longest first; one result object', async () => {
    const fake = fakeService();
    const store = new AudioStore();
    const leases = countingLeases(2);
    const { recognizePieces } = createPiecesActivities(
      { service: fake.service, store, model: 'x', leases, maxInFlight: 16 },
      noWords,
    );
    const out = await recognizePieces(input);
    expect(fake.calls()).toBe(4);
    expect(fake.peak()).toBe(3); // its own slot and two leases
    expect(leases.held()).toBe(0);
    expect(fake.sent[0]).toBe(50); // the 58-s piece first
    // The four neighbouring pieces' audio in one ranged read of the track: 0–180 s.
    expect(store.ranges).toEqual([{ start: 0, end: 1_439_999 }]);
    expect(out.pieces.map((p) => [p.session, p.utterances, p.requests])).toEqual([
      [0, 1, 1],
      [1, 1, 1],
      [2, 1, 1],
      [3, 1, 1],
    ]);
    const result = JSON.parse(await store.getText(input.resultKey)) as {
      pieces: { session: number; utterances: { start: number }[] }[];
    };
    expect(result.pieces.map((p) => p.utterances[0]!.start)).toEqual([0.5, 50.5, 108.5, 130.5]);
    // No progress kept after the last piece (the result is written instead): the last kept lacks it.
    const kept = JSON.parse(await store.getText(partialResultKey(input.resultKey))) as { pieces: unknown[] };
    expect(kept.pieces.length).toBeLessThan(4);
    // A retried attempt finds the result: reused, nothing sent, no audio read.
    const env = new MockActivityEnvironment({ attempt: 2 } as never);
    const again = (await env.run(recognizePieces, input)) as Awaited<ReturnType<typeof recognizePieces>>;
    expect(again.reused).toBe(true);
    expect(fake.calls()).toBe(4);
    expect(store.ranges).toHaveLength(1);
  });

  it('asks the free room once at the start and again after 1, 2, 4… pieces: runners join as room frees', async () => {
    const fake = fakeService();
    // The account full at the start and at the first piece's end, then 3 sessions free.
    const leases = countingLeases(0, 0, 3);
    const many = Array.from({ length: 12 }, (_, i) => ({ session: i, start: i * 10, end: i * 10 + 8 }));
    const { recognizePieces } = createPiecesActivities(
      { service: fake.service, store: new AudioStore(), model: 'x', leases, maxInFlight: 16 },
      noWords,
    );
    const out = await recognizePieces({ ...input, pieces: many });
    expect(out.pieces).toHaveLength(12);
    expect(fake.calls()).toBe(12);
    expect(fake.peak()).toBe(4); // its own slot and the three leases of the third ask
    expect(leases.granted()).toBe(3);
    expect(leases.held()).toBe(0);
    // At the start and after pieces 1, 2, 4 and 8 at most (none once no piece waits): not one per piece.
    expect(leases.asks()).toBeGreaterThanOrEqual(3);
    expect(leases.asks()).toBeLessThanOrEqual(5);
  });

  it("with the process's own count, no more requests at once than its sessions; without leases, one at a time", async () => {
    const many = Array.from({ length: 9 }, (_, i) => ({ session: i, start: i * 10, end: i * 10 + 8 }));
    // The process's own count is its sessions: the group's own slot waits its turn among them too.
    for (const [leases, peak] of [
      [localPieceLeases(2), 2],
      [undefined, 1],
    ] as const) {
      const fake = fakeService();
      const { recognizePieces } = createPiecesActivities(
        { service: fake.service, store: new AudioStore(), model: 'x', leases, maxInFlight: 16 },
        noWords,
      );
      await recognizePieces({ ...input, pieces: many });
      expect(fake.calls()).toBe(9);
      expect(fake.peak()).toBe(peak);
    }
  });
});

describe("recognizePieces: a lease its runner is done with goes to the process's other calls", () => {
  it("a later call's pieces take the leases an earlier call's runners ran out of, with no ask", async () => {
    // The account had three sessions free for call A's first ask, none for any ask after it.
    const leases = countingLeases(3);
    let startB: () => void = () => {};
    const bMayStart = new Promise<void>((r) => (startB = r));
    const fake = fakeService();
    let inFlightB = 0;
    let peakB = 0;
    const service = {
      async recognizeFile(opts: { startOffsetSeconds?: number }) {
        const isB = (opts.startOffsetSeconds ?? 0) >= 1000;
        if (isB) peakB = Math.max(peakB, ++inFlightB);
        try {
          return await fake.service.recognizeFile(opts as never);
        } finally {
          if (isB) inFlightB -= 1;
          else startB();
        }
      },
    } as unknown as ServiceClient;
    const { recognizePieces } = createPiecesActivities(
      { service, store: new AudioStore(), model: 'x', leases, maxInFlight: 16 },
      noWords,
    );
    const a = Array.from({ length: 4 }, (_, i) => ({ session: i, start: i * 10, end: i * 10 + 8 }));
    const b = Array.from({ length: 12 }, (_, i) => ({
      session: i,
      start: 1000 + i * 10,
      end: 1008 + i * 10,
    }));
    const [, outB] = await Promise.all([
      recognizePieces({ ...input, pieces: a }),
      bMayStart.then(() => recognizePieces({ ...input, group: 1, resultKey: 'staging/b.json', pieces: b })),
    ]);
    expect(outB.pieces).toHaveLength(12);
    // B's own asks found no room; A's three leases ran its pieces beside B's own slot once A was done.
    expect(leases.granted()).toBe(3);
    expect(peakB).toBeGreaterThan(1);
    expect(leases.held()).toBe(0);
  });
});

describe('recognizePieces: the track read once per run of neighbouring pieces', () => {
  it('reads each run of neighbouring pieces once: a long silence or the read limit starts another read', async () => {
    const fake = fakeService();
    const store = new AudioStore();
    const { recognizePieces } = createPiecesActivities(
      { service: fake.service, store, model: 'x', leases: countingLeases(4), maxInFlight: 16 },
      noWords,
    );
    // 0–50 and 55–100 s share a read; 200–250 s follows 100 s of silence; then 58-s pieces back to back
    // from 250 s until a read would pass 16 MiB (2,097 s of 8-kHz mu-law).
    const far = [
      { session: 0, start: 0, end: 50 },
      { session: 1, start: 55, end: 100 },
      { session: 2, start: 200, end: 250 },
      ...Array.from({ length: 40 }, (_, i) => ({ session: 3 + i, start: 250 + i * 58, end: 308 + i * 58 })),
    ];
    const out = await recognizePieces({ ...input, pieces: far });
    expect(out.pieces).toHaveLength(43);
    expect(fake.calls()).toBe(43);
    const reads = store.ranges
      .map((r) => [r.start! / 8000, (r.end! + 1) / 8000])
      .sort((a, b) => a[0]! - b[0]!);
    expect(reads).toEqual([
      [0, 100],
      [200, 200 + 50 + 35 * 58],
      [250 + 35 * 58, 250 + 40 * 58],
    ]);
    // Each piece was sent its own audio: as many bytes as its seconds.
    const result = JSON.parse(await store.getText(input.resultKey)) as {
      pieces: { session: number; audioSecondsSent: number }[];
    };
    expect(result.pieces.map((p) => p.audioSecondsSent)).toEqual(far.map((p) => p.end - p.start));
  });
});

describe("recognizePieces: the process's sessions go to the longest pieces first", () => {
  /** Reading a piece's audio takes longer the longer it is (10 ms per second of audio). */
  class SlowReads extends AudioStore {
    override async getStream(...args: unknown[]): Promise<Readable> {
      const { start = 0, end = 0 } = (args[1] ?? {}) as { start?: number; end?: number };
      await new Promise((r) => setTimeout(r, ((end - start + 1) / 8000) * 10));
      return super.getStream(...args);
    }
  }
  /**
   * A service with the client's session limiter of 2: the pieces' starts (seconds) in the order sent;
   * `onSend(n)` is told of the n-th request as it goes.
   */
  function twoSessions(onSend: (n: number) => void = () => {}) {
    const sessions = pLimit(2);
    const fake = fakeService();
    const sent: number[] = [];
    const service = {
      recognizeFile: (opts: { startOffsetSeconds?: number }) =>
        sessions(() => {
          sent.push(opts.startOffsetSeconds ?? 0);
          onSend(sent.length);
          return fake.service.recognizeFile(opts as never);
        }),
    } as unknown as ServiceClient;
    return { service, sent };
  }
  // 58, 50, 22 and 8 s: the group's own slot and two leases make three runners for two sessions.
  const uneven = [
    { session: 0, start: 0, end: 58 },
    { session: 1, start: 58, end: 108 },
    { session: 2, start: 108, end: 130 },
    { session: 3, start: 130, end: 138 },
  ];

  it('longest first, however long their audio takes to read', async () => {
    const { service, sent } = twoSessions();
    const { recognizePieces } = createPiecesActivities(
      { service, store: new SlowReads(), model: 'x', leases: localPieceLeases(2), maxInFlight: 16 },
      noWords,
    );
    await recognizePieces({ ...input, pieces: uneven });
    // The two sessions went to the 58-s and 50-s pieces; the 22-s one waited its turn.
    expect(new Set(sent.slice(0, 2))).toEqual(new Set([0, 58]));
    expect(sent).toHaveLength(4);
  });

  it("a later call's long pieces go before an earlier call's short ones still waiting", async () => {
    // Call A's group: one 58-s piece and three of 8 s; call B's group (asked while A's first two are
    // sent): 50 and 40 s, at 1,000 s and on.
    const short = [
      { session: 0, start: 0, end: 58 },
      ...[1, 2, 3].map((i) => ({ session: i, start: 50 + i * 10, end: 58 + i * 10 })),
    ];
    const long = [
      { session: 0, start: 1000, end: 1050 },
      { session: 1, start: 1100, end: 1140 },
    ];
    let startB: () => void = () => {};
    const bAsked = new Promise<void>((r) => (startB = r));
    const { service, sent } = twoSessions((n) => n === 2 && startB());
    const { recognizePieces } = createPiecesActivities(
      { service, store: new AudioStore(), model: 'x', leases: localPieceLeases(2), maxInFlight: 16 },
      noWords,
    );
    await Promise.all([
      recognizePieces({ ...input, pieces: short }),
      bAsked.then(() => recognizePieces({ ...input, group: 1, resultKey: 'staging/b.json', pieces: long })),
    ]);
    expect(sent.slice(0, 2)).toEqual([0, 60]);
    // A's two 8-s pieces waited while B's pieces went as sessions freed: no lease kept B's turn away.
    expect(sent.slice(2, 4)).toEqual([1000, 1100]);
    expect(sent).toHaveLength(6);
  });

  it('without turns, pieces whose audio reads ended first took the sessions before the longest', async () => {
    const { service, sent } = twoSessions();
    const { recognizePieces } = createPiecesActivities(
      { service, store: new SlowReads(), model: 'x', leases: countingLeases(2), maxInFlight: 16 },
      noWords,
    );
    // Pieces far apart (each its own read): 22 s read in 220 ms, 50 s in 500 ms, 58 s in 580 ms.
    const apart = uneven.map((p, i) => ({ ...p, start: p.start + i * 100, end: p.end + i * 100 }));
    await recognizePieces({ ...input, pieces: apart });
    // The longest piece waited for a session.
    expect(sent.slice(0, 2)).not.toContain(0);
    expect(sent).toHaveLength(4);
  });
});

describe('recognizePieces: failures and retried attempts', () => {
  it('550 and 600 send the piece again; its retries and reasons are kept', async () => {
    const fake = fakeService({
      1: new ServiceError({ kind: 'noResource', message: '550 No Resource', code: 550 }),
      2: new ServiceError({ kind: 'session', message: '600 Internal Error', code: 600 }),
    });
    const { recognizePieces } = createPiecesActivities(
      { service: fake.service, store: new AudioStore(), model: 'x', retryDelayMs: 0 },
      noWords,
    );
    const out = await recognizePieces(input);
    expect(fake.calls()).toBe(6);
    expect(out.pieces.reduce((n, p) => n + p.retries, 0)).toBe(2);
  });

  it('652 (a piece the service refuses) fails the activity non-retryably with the reason', async () => {
    const fake = fakeService({
      1: new ServiceError({ kind: 'invalid', message: '652 Excess Of Max Voice Length', code: 652 }),
    });
    const { recognizePieces } = createPiecesActivities(
      { service: fake.service, store: new AudioStore(), model: 'x', retryDelayMs: 0 },
      noWords,
    );
    await expect(recognizePieces(input)).rejects.toMatchObject({
      type: 'ServiceInvalidRequest',
      nonRetryable: true,
      message: expect.stringMatching(/piece 1 .*652/),
    });
    expect(fake.calls()).toBe(1);
  });

  it('a retried attempt sends only the pieces its predecessor did not keep', async () => {
    const store = new AudioStore();
    const first = fakeService({ 3: new ServiceError({ kind: 'auth', message: 'refused' }) });
    const activities = (service: ServiceClient) =>
      createPiecesActivities({ service, store, model: 'x', retryDelayMs: 0 }, noWords);
    await expect(activities(first.service).recognizePieces(input)).rejects.toThrow();
    const kept = JSON.parse(await store.getText(partialResultKey(input.resultKey))) as {
      pieces: { session: number }[];
    };
    expect(kept.pieces).toHaveLength(2);
    const second = fakeService();
    const env = new MockActivityEnvironment({ attempt: 2 } as never);
    const out = (await env.run(activities(second.service).recognizePieces, input)) as Awaited<
      ReturnType<ReturnType<typeof activities>['recognizePieces']>
    >;
    expect(second.calls()).toBe(2);
    expect(out.pieces).toHaveLength(4);
    const result = JSON.parse(await store.getText(input.resultKey)) as { pieces: { session: number }[] };
    expect(result.pieces.map((p) => p.session)).toEqual([0, 1, 2, 3]);
  });
});
