/**
 * Merges the results of every session of a call into one timeline: absolute times, the speaker of
 * each session's track, sorted by start (overlapping speech of two channels is kept, both utterances
 * in start order), and each session's restart reasons for result.json. The session results keep the
 * service's name `score`; from here on it is `confidence`. Runs on the media queue: it is a little CPU
 * and one object read per session (per group of pieces for file recognition).
 */
import { timelineSchema, type Timeline, type Utterance } from '../../schemas/transcript.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { sessionResultSchema, type SessionResult } from '../asr/asr-activities.ts';
import { piecesResultSchema } from '../asr/piece-types.ts';

export interface MergeSessionRef {
  session: number;
  track: number;
  speaker: string;
  resultKey: string;
}

export interface MergeTimelineInput {
  callId: string;
  durationSeconds: number;
  sessions: MergeSessionRef[];
  timelineKey: string;
}

export function mergeSessions(
  callId: string,
  durationSeconds: number,
  sessions: { ref: MergeSessionRef; result: SessionResult }[],
): Timeline {
  const merged: Omit<Utterance, 'index'>[] = [];
  for (const { ref, result } of sessions) {
    for (const u of result.utterances) {
      merged.push({
        speaker: ref.speaker,
        track: ref.track,
        session: ref.session,
        start: u.start,
        end: u.end,
        text: u.text,
        ...(u.score !== undefined ? { confidence: u.score } : {}),
      });
    }
  }
  merged.sort((a, b) => a.start - b.start || a.track - b.track || a.end - b.end);
  const byTrack = [...sessions].sort((a, b) => a.ref.track - b.ref.track);
  const speakers = [...new Set(byTrack.map((s) => s.ref.speaker))];
  return timelineSchema.parse({
    callId,
    durationSeconds,
    speakers,
    utterances: merged.map((u, index) => ({ index, ...u })),
    sessions: [...sessions]
      .sort((a, b) => a.ref.session - b.ref.session)
      .map(({ ref, result }) => ({ session: ref.session, restartReasons: result.restartReasons })),
  });
}

/**
 * Each session's result: its own object, or its piece in its group's object (file recognition:
 * piece-types.ts), each object read once.
 */
async function resultsOf(
  store: ObjectStore,
  refs: MergeSessionRef[],
): Promise<{ ref: MergeSessionRef; result: SessionResult }[]> {
  const keys = [...new Set(refs.map((r) => r.resultKey))];
  const bodies = new Map(
    await Promise.all(
      keys.map(async (key) => [key, JSON.parse(await store.getText(key)) as unknown] as const),
    ),
  );
  return refs.map((ref) => {
    const body = bodies.get(ref.resultKey);
    const group = piecesResultSchema.safeParse(body);
    if (!group.success) return { ref, result: sessionResultSchema.parse(body) };
    const result = group.data.pieces.find((p) => p.session === ref.session);
    if (!result) throw new Error(`session ${ref.session}: not in the pieces result ${ref.resultKey}`);
    return { ref, result };
  });
}

export function createMergeActivities({ store }: { store: ObjectStore }) {
  return {
    async mergeTimeline(
      input: MergeTimelineInput,
    ): Promise<{ timelineKey: string; utterances: number; speakers: string[] }> {
      const sessions = await resultsOf(store, input.sessions);
      const timeline = mergeSessions(input.callId, input.durationSeconds, sessions);
      await store.put(input.timelineKey, JSON.stringify(timeline), { contentType: 'application/json' });
      return {
        timelineKey: input.timelineKey,
        utterances: timeline.utterances.length,
        speakers: timeline.speakers,
      };
    },
  };
}

export type MergeActivities = ReturnType<typeof createMergeActivities>;
