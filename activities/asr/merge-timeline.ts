/**
 * Merges the results of every session of a call into one timeline: absolute times, the speaker of
 * each session's track, sorted by start (overlapping speech of two channels is kept, both utterances
 * in start order). Runs on the media queue: it is a little CPU and two object reads per session.
 */
import { timelineSchema, type Timeline, type Utterance } from '../../schemas/transcript.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { sessionResultSchema, type SessionResult } from './recognize-session.ts';

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
        ...(u.score !== undefined ? { score: u.score } : {}),
      });
    }
  }
  merged.sort((a, b) => a.start - b.start || a.track - b.track || a.end - b.end);
  const speakers = [...new Set(sessions.sort((a, b) => a.ref.track - b.ref.track).map((s) => s.ref.speaker))];
  return timelineSchema.parse({
    callId,
    durationSeconds,
    speakers,
    utterances: merged.map((u, index) => ({ index, ...u })),
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
