/**
 * Talk time of a call (result.json's `talk`): who talked how long, the silences and the cross-talk,
 * from the utterances' absolute times. Pure.
 */
import type { SpeakerTalk, Talk } from './result.ts';
import type { Utterance } from './transcript.ts';
import { roundThousandths } from './units.ts';

export interface Interval {
  start: number;
  end: number;
}

/** Sorted, overlap-free union of intervals. */
export function union(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter((i) => i.end > i.start).sort((a, b) => a.start - b.start);
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end);
    else out.push({ ...i });
  }
  return out;
}

/**
 * Talk time per speaker (the union of its utterances, so its own overlaps count once), silence per
 * speaker (the call's length minus its talk), silence of the call (nobody talks) and overlap (two or
 * more talk at once). Times are clamped to [0, duration].
 */
export function talkTimeBySpeaker(
  utterances: readonly Pick<Utterance, 'speaker' | 'start' | 'end'>[],
  durationSeconds: number,
  speakers: readonly string[] = [],
): Talk {
  const duration = Math.max(durationSeconds, 0);
  const clamp = (u: Interval): Interval => ({
    start: Math.min(Math.max(u.start, 0), duration),
    end: Math.min(Math.max(u.end, 0), duration),
  });
  const names = [...new Set([...speakers, ...utterances.map((u) => u.speaker)])];
  const perSpeaker = new Map(
    names.map((s) => [s, union(utterances.filter((u) => u.speaker === s).map(clamp))]),
  );
  const bySpeaker: SpeakerTalk[] = names.map((speaker) => {
    const talk = perSpeaker.get(speaker)!.reduce((sum, i) => sum + (i.end - i.start), 0);
    return {
      speaker,
      utterances: utterances.filter((u) => u.speaker === speaker).length,
      talkSeconds: roundThousandths(talk),
      silenceSeconds: roundThousandths(Math.max(0, duration - talk)),
      talkShare: duration > 0 ? Math.min(1, roundThousandths(talk / duration)) : 0,
    };
  });
  // Sweep over every speaker's merged intervals: depth ≥ 1 is talk, ≥ 2 is overlap.
  const events = sweepEvents(perSpeaker);
  let depth = 0;
  let last = 0;
  let anyTalk = 0;
  let overlap = 0;
  for (const e of events) {
    if (depth >= 1) anyTalk += e.t - last;
    if (depth >= 2) overlap += e.t - last;
    depth += e.d;
    last = e.t;
  }
  return {
    bySpeaker,
    silenceSeconds: roundThousandths(Math.max(0, duration - anyTalk)),
    overlapSeconds: roundThousandths(overlap),
  };
}

/**
 * The starts (+1) and ends (-1) of every speaker's merged talk in time order, an end before a start at
 * the same time: a sweep over them counts how many speakers talk at once.
 */
export function sweepEvents(perSpeaker: ReadonlyMap<string, Interval[]>): { t: number; d: 1 | -1 }[] {
  return [...perSpeaker.values()]
    .flat()
    .flatMap((i) => [
      { t: i.start, d: 1 as const },
      { t: i.end, d: -1 as const },
    ])
    .sort((a, b) => a.t - b.t || a.d - b.d);
}
