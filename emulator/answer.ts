/** What a route handler answers; the server writes it, applies latency faults and logs it. */
import type { LogEntry } from './stats.ts';

export interface Answer {
  status: number;
  /** A JSON body; absent with `text`, or for an empty body (204). */
  json?: unknown;
  text?: string;
  contentType?: string;
  headers?: Record<string, string | string[]>;
  /** Fields for the request log. */
  log?: Partial<LogEntry>;
  /** Called once the answer is written (a session measures its deadlines from there). */
  onSent?: () => void;
}
