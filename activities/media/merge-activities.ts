/**
 * Merges the results of every session of a call into one timeline: absolute times, the speaker of
 * each session's track, sorted by start (overlapping speech of two channels is kept, both utterances
 * in start order), and each session's restart reasons for result.json. The session results keep the
 * service's name `score`; from here on it is `confidence`. Runs on the media queue: it is a little CPU
 * and two object reads per session.
 */
import { timelineSchema, type Timeline, type Utterance } from '../../schemas/transcript.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { sessionResultSchema, type SessionResult } from '../asr/asr-activities.ts';

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

export function createMergeActivities({ store }: { store: ObjectStore }) {
  return {
    async mergeTimeline(
      input: MergeTimelineInput,
    ): Promise<{ timelineKey: string; utterances: number; speakers: string[] }> {
      const sessions = await Promise.all(
        input.sessions.map(async (ref) => ({
          ref,
          result: sessionResultSchema.parse(JSON.parse(await store.getText(ref.resultKey))),
        })),
      );
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
