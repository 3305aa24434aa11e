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
