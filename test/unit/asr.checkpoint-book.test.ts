/**
 * Recognition checkpoints (activities/asr/checkpoint-book.ts) with a fake store counting requests: one
 * object per call and process, written about once per 30 s of audio however many sessions of the call
 * stream side by side, each session never more than 30 s behind; and the lookup of a retried attempt.
 */
import { describe, expect, it } from 'vitest';
import {
  CHECKPOINT_AUDIO_SECONDS,
  createCheckpointBook,
  findProgress,
  keepUnfinished,
} from '../../activities/asr/checkpoint-book.ts';
import type { PartialProgress, RecognizeSessionInput } from '../../activities/asr/session-types.ts';
import { partialResultKey, sessionCheckpointsPrefix } from '../../schemas/call-keys.ts';
import { MemoryStore } from './nlp.helpers.ts';

/** A store counting its requests by operation, whose writes can be made to fail. */
class CountingStore extends MemoryStore {
  readonly ops = { put: 0, read: 0, list: 0 };
  failing = false;
  override async put(key: string, body: string | Buffer): Promise<void> {
    this.ops.put += 1;
    if (this.failing) throw new Error('connect ECONNREFUSED');
    await super.put(key, body);
  }
  override async read(key: string) {
    this.ops.read += 1;
    return super.read(key);
  }
  override async listPage(prefix: string) {
    this.ops.list += 1;
    return super.listPage(prefix);
  }
}

const CALL_DIR = 'staging/calls/call-a/wf-a/';

function sessionInput(session: number, start: number, end: number, dir = CALL_DIR): RecognizeSessionInput {
  return {
    callId: 'call-a',
    session,
    audioKey: `${dir}audio/${session}.mulaw`,
    start,
    end,
    resultKey: `${dir}sessions/${String(session).padStart(4, '0')}.json`,
    maxRestarts: 3,
  };
}

function progressAt(input: RecognizeSessionInput, resumeAt = input.start): PartialProgress {
  return {
    resumeAt,
    utterances: resumeAt > input.start ? [{ start: input.start, end: resumeAt, text: 'はい' }] : [],
    audioSecondsSent: resumeAt - input.start,
    restarts: 0,
    reStreamedSeconds: 0,
    requests: 0,
    restartReasons: [],
  };
}

/** The resume points a checkpoint object holds, by session number. */
function resumePoints(store: MemoryStore, key: string): Record<string, number> {
  if (!store.objects.has(key)) return {};
  const body = store.json(key) as { sessions: Record<string, { resumeAt: number }> };
  return Object.fromEntries(Object.entries(body.sessions).map(([s, p]) => [s, p.resumeAt]));
}

describe('checkpoint book', () => {
  it('writes one object per call for sessions side by side, about once per 30 s of audio, none behind more', async () => {
    const store = new CountingStore();
    const book = createCheckpointBook(store, 'writer');
    const key = `${CALL_DIR}checkpoints/writer.json`;
    const length = 300;
    const sessions = [0, 1, 2, 3].map((i) => {
      const input = sessionInput(i, i * length, (i + 1) * length);
      const state = progressAt(input);
      return { input, state, entry: book.enter(input, state) };
    });
    // Finals every 5 s of audio in each session, in turn, as streams side by side deliver them.
    for (let t = 5; t <= length; t += 5) {
      for (const s of sessions) {
        s.state.resumeAt = s.input.start + t;
        await s.entry.stage();
        for (const other of sessions) {
          const kept = resumePoints(store, key)[String(other.input.session)] ?? other.input.start;
          expect(other.state.resumeAt - kept).toBeLessThan(CHECKPOINT_AUDIO_SECONDS);
        }
      }
    }
    // About one write per 30 s of audio for the four sessions (each write takes the others up to one
    // final short of due, so at most one per 25 s here), where one object per session took 40.
    expect(store.ops.put).toBeGreaterThanOrEqual(length / CHECKPOINT_AUDIO_SECONDS);
    expect(store.ops.put).toBeLessThanOrEqual(length / (CHECKPOINT_AUDIO_SECONDS - 5));
    expect([...store.objects.keys()]).toEqual([key]);
    expect(Object.keys(resumePoints(store, key))).toEqual(['0', '1', '2', '3']);
  });

  it('writes each call to its own object', async () => {
    const store = new CountingStore();
    const book = createCheckpointBook(store, 'writer');
    const other = 'staging/calls/call-b/wf-b/';
    const a = sessionInput(0, 0, 100);
    const b = sessionInput(0, 0, 100, other);
    const [stateA, stateB] = [progressAt(a), progressAt(b)];
    const [entryA, entryB] = [book.enter(a, stateA), book.enter(b, stateB)];
    stateA.resumeAt = 31;
    stateB.resumeAt = 40;
    await Promise.all([entryA.stage(), entryB.stage()]);
    expect(resumePoints(store, `${CALL_DIR}checkpoints/writer.json`)).toEqual({ '0': 31 });
    expect(resumePoints(store, `${other}checkpoints/writer.json`)).toEqual({ '0': 40 });
    expect(store.ops.put).toBe(2);
  });

  it('a failing store never rejects, and the next write carries the newest progress', async () => {
    const store = new CountingStore();
    const book = createCheckpointBook(store, 'writer');
    const input = sessionInput(0, 0, 200);
    const state = progressAt(input);
    const entry = book.enter(input, state);
    store.failing = true;
    state.resumeAt = 35;
    await expect(entry.stage()).resolves.toBeUndefined();
    await expect(entry.stage(true)).resolves.toBeUndefined();
    expect(store.ops.put).toBe(2);
    store.failing = false;
    state.resumeAt = 70;
    await entry.stage();
    expect(resumePoints(store, `${CALL_DIR}checkpoints/writer.json`)).toEqual({ '0': 70 });
  });

  it('a session that left is not in the next write; one that came back is', async () => {
    const store = new CountingStore();
    const book = createCheckpointBook(store, 'writer');
    const key = `${CALL_DIR}checkpoints/writer.json`;
    const [a, b] = [sessionInput(0, 0, 100), sessionInput(1, 100, 200)];
    const [stateA, stateB] = [progressAt(a, 40), progressAt(b, 140)];
    const entryA = book.enter(a, stateA);
    const entryB = book.enter(b, stateB);
    await entryA.stage(true);
    expect(resumePoints(store, key)).toEqual({ '0': 40, '1': 140 });
    entryA.leave();
    stateB.resumeAt = 175;
    await entryB.stage();
    expect(resumePoints(store, key)).toEqual({ '1': 175 });
    // A retried attempt of the same session on this process replaces it; the old one leaving does not
    // take the new one out.
    const retry = book.enter(b, progressAt(b, 180));
    entryB.leave();
    await retry.stage(true);
    expect(resumePoints(store, key)).toEqual({ '1': 180 });
  });

  it('writes nothing for sessions with no progress yet', async () => {
    const store = new CountingStore();
    const book = createCheckpointBook(store, 'writer');
    const input = sessionInput(0, 10, 100);
    await book.enter(input, progressAt(input)).stage(true);
    expect(store.ops.put).toBe(0);
  });

  it('uses a writer id of letters only (a digit run in a key would read as a number someone said)', () => {
    const { writerId } = createCheckpointBook(new CountingStore());
    expect(writerId).toMatch(/^[a-z]{16}$/);
  });
});

describe('findProgress (a retried attempt)', () => {
  it('takes the newest progress of the session from every checkpoint of the call and its own key', async () => {
    const store = new CountingStore();
    const input = sessionInput(2, 100, 300);
    const [one, two] = [createCheckpointBook(store, 'one'), createCheckpointBook(store, 'two')];
    await one.enter(input, progressAt(input, 140)).stage(true);
    // A zombie attempt elsewhere went further, of the same audio.
    await two.enter(input, progressAt(input, 170)).stage(true);
    await two.enter(sessionInput(3, 300, 400), progressAt(sessionInput(3, 300, 400), 390)).stage(true);
    await keepUnfinished(store, input, progressAt(input, 155));
    store.ops.read = 0;
    const found = await findProgress(store, input);
    expect(found?.resumeAt).toBe(170);
    expect(found?.utterances).toEqual([{ start: 100, end: 170, text: 'はい' }]);
    // One LIST of the call's checkpoints, a GET of each and of the session's own key.
    expect(store.ops).toMatchObject({ list: 1, read: 3 });
    expect(sessionCheckpointsPrefix(input.resultKey)).toBe(`${CALL_DIR}checkpoints/`);
  });

  it("finds an older release's per-session partial result, so in-flight sessions resume across an upgrade", async () => {
    const store = new CountingStore();
    const input = sessionInput(0, 0, 200);
    await store.put(partialResultKey(input.resultKey), JSON.stringify(progressAt(input, 90)));
    expect((await findProgress(store, input))?.resumeAt).toBe(90);
  });

  it('ignores progress outside the session, of other bounds, and unreadable objects', async () => {
    const store = new CountingStore();
    const input = sessionInput(0, 0, 200);
    await store.put(`${CALL_DIR}checkpoints/garbage.json`, 'not json');
    await store.put(partialResultKey(input.resultKey), JSON.stringify(progressAt(input, 200)));
    const book = createCheckpointBook(store, 'writer');
    // Session 0 of other bounds (another plan of the same call), and the session at its very start.
    await book.enter({ ...input, end: 400 }, progressAt({ ...input, end: 400 }, 250)).stage(true);
    expect(await findProgress(store, input)).toBeUndefined();
    expect(await findProgress(store, sessionInput(5, 0, 10))).toBeUndefined();
  });
});
