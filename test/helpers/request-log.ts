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

/** Recognition sessions started (answers carrying the `started` message). */
export function streamStarts(entries: RequestLogEntry[]): number {
  return entries.filter((e) => e.messages?.includes('started')).length;
}

/** Seconds of 8 kHz mu-law audio sent in audio requests. */
export function muLawSecondsSent(entries: RequestLogEntry[]): number {
  return entries.filter((e) => e.chunk !== undefined && e.bytes).reduce((s, e) => s + e.bytes! / 8000, 0);
}
