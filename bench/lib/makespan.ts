/**
 * The ideal makespan of a set of planned sessions on `budget` concurrent streams paced at `speed`:
 * no schedule beats the longest session (a session is one stream, start to end), nor the total session
 * audio spread evenly over the budget. `max(longest, total ÷ budget) ÷ speed` is that lower bound.
 */
import type { ResultDocument } from '../../schemas/result.ts';

export interface MakespanBound {
  sessions: number;
  totalSessionSeconds: number;
  longestSessionSeconds: number;
  idealSeconds: number;
}

export function makespanBound(docs: ResultDocument[], budget: number, speed: number): MakespanBound {
  const lengths = docs.flatMap((d) => d.sessions.map((s) => s.end - s.start));
  const total = lengths.reduce((a, b) => a + b, 0);
  const longest = Math.max(0, ...lengths);
  return {
    sessions: lengths.length,
    totalSessionSeconds: total,
    longestSessionSeconds: longest,
    idealSeconds: Math.max(longest, total / budget) / speed,
  };
}

/**
 * File recognition's ideal makespan (issue 38): every piece's processing time (its audio × the service's
 * real-time factor) and every stream session's audio, spread over the account's sessions, at `speed`,
 * plus the longest call's stages outside recognition (`outsideSeconds`, measured), which no number of
 * sessions shortens.
 */
export function fileMakespanBound(
  docs: ResultDocument[],
  budget: number,
  speed: number,
  rtf: number,
  outsideSeconds: number,
): { pieces: number; pieceAudioSeconds: number; streamedSeconds: number; idealSeconds: number } {
  const sessions = docs.flatMap((d) => d.sessions);
  const pieces = sessions.filter((s) => s.recognition === 'file');
  const pieceAudio = pieces.reduce((n, s) => n + s.end - s.start, 0);
  const streamed = sessions.filter((s) => s.recognition !== 'file').reduce((n, s) => n + s.end - s.start, 0);
  return {
    pieces: pieces.length,
    pieceAudioSeconds: pieceAudio,
    streamedSeconds: streamed,
    idealSeconds: (pieceAudio * rtf + streamed) / budget / speed + outsideSeconds,
  };
}

/** Requests per hour of recorded audio, per endpoint (token requests included where counted). */
export function requestsPerAudioHour(docs: ResultDocument[]): Record<string, number> {
  const hours = docs.reduce((s, d) => s + d.audio.durationSeconds, 0) / 3600;
  const sums: Record<string, number> = {};
  for (const d of docs) {
    for (const [endpoint, cost] of Object.entries(d.processing.requests))
      sums[endpoint] = (sums[endpoint] ?? 0) + cost.requests;
  }
  return Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, Math.round(v / hours)]));
}

/**
 * Dialog-act units per hour of recorded audio (result.json `dialogActs.units`: a request each, before
 * issue 38), against the requests sent for them (one per distinct text).
 */
export function dialogActUnitsPerAudioHour(docs: ResultDocument[]): { units: number; requests: number } {
  const hours = docs.reduce((s, d) => s + d.audio.durationSeconds, 0) / 3600;
  const units = docs.reduce((n, d) => n + (d.dialogActs?.units ?? 0), 0);
  const requests = docs.reduce((n, d) => n + (d.processing.requests.dialogActs?.requests ?? 0), 0);
  return { units: Math.round(units / hours), requests: Math.round(requests / hours) };
}

/**
 * Where the budget's slot-seconds went between the start and the end of the last recognition:
 * `budget × makespan = streaming + overhead + dispatch + starved + tail`. Streaming is the session
 * audio ÷ speed (the ideal's own work); overhead is the rest of the recognition activities' time
 * (opening the session, the first S3 read, waiting for the last final, writing the result, a pace below
 * `speed`); dispatch is a free slot while a scheduled session had not started (queue and poll latency);
 * starved is a free slot with nothing scheduled before the last session was (transcodes not ready,
 * the first call's probe and plan); tail is free slots after the last session started.
 */
export interface SlotSeconds {
  streaming: number;
  overhead: number;
  overheadPerSessionSeconds: number;
  dispatch: number;
  starved: number;
  tail: number;
}

export function slotSeconds(
  sessions: { scheduledMs: number; startMs: number; endMs: number }[],
  t0Ms: number,
  budget: number,
  streamingSeconds: number,
): SlotSeconds {
  const events: [number, 'schedule' | 'start' | 'end'][] = sessions.flatMap((s) => [
    [s.scheduledMs, 'schedule'] as [number, 'schedule'],
    [s.startMs, 'start'] as [number, 'start'],
    [s.endMs, 'end'] as [number, 'end'],
  ]);
  // At one instant, ends free slots before starts take them.
  const order = { end: 0, schedule: 1, start: 2 };
  events.sort((a, b) => a[0] - b[0] || order[a[1]] - order[b[1]]);
  const lastStart = Math.max(...sessions.map((s) => s.startMs));
  let running = 0;
  let waiting = 0;
  let at = t0Ms;
  const free = { dispatch: 0, starved: 0, tail: 0 };
  for (const [t, kind] of events) {
    const idle = Math.max(0, budget - running) * (t - at);
    if (at >= lastStart) free.tail += idle;
    else if (waiting > 0) {
      const busyWaiting = Math.min(waiting, Math.max(0, budget - running));
      free.dispatch += busyWaiting * (t - at);
      free.starved += idle - busyWaiting * (t - at);
    } else free.starved += idle;
    at = t;
    if (kind === 'schedule') waiting += 1;
    else if (kind === 'start') {
      waiting -= 1;
      running += 1;
    } else running -= 1;
  }
  const activitySeconds = sessions.reduce((t, s) => t + s.endMs - s.startMs, 0) / 1000;
  const r = (x: number) => Math.round(x * 10) / 10;
  return {
    streaming: r(streamingSeconds),
    overhead: r(activitySeconds - streamingSeconds),
    overheadPerSessionSeconds:
      Math.round(((activitySeconds - streamingSeconds) / sessions.length) * 100) / 100,
    dispatch: r(free.dispatch / 1000),
    starved: r(free.starved / 1000),
    tail: r(free.tail / 1000),
  };
}
