/** Reading the emulator's JSON-lines request log: the evidence of what was really sent. */
import { existsSync, readFileSync } from 'node:fs';
import type { LogEntry } from '../../emulator/stats.ts';

/** One line of the log, as the emulator writes it. */
export type RequestLogEntry = LogEntry;

export function readRequestLog(path: string): RequestLogEntry[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RequestLogEntry);
}

/** Recognition sessions started (answers carrying the `started` message; a file request's are not). */
export function streamStarts(entries: RequestLogEntry[]): number {
  return entries.filter((e) => !e.file && e.messages?.includes('started')).length;
}

/** File recognition requests answered with a result, and the seconds of audio they held. */
export function fileRequestsAnswered(entries: RequestLogEntry[]): { requests: number; seconds: number } {
  const answered = entries.filter((e) => e.file && e.status === 200);
  return { requests: answered.length, seconds: answered.reduce((s, e) => s + (e.audioSeconds ?? 0), 0) };
}

/** Seconds of 8 kHz mu-law audio sent in audio requests. */
export function muLawSecondsSent(entries: RequestLogEntry[]): number {
  return entries.filter((e) => e.chunk !== undefined && e.bytes).reduce((s, e) => s + e.bytes! / 8000, 0);
}
