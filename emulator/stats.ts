/**
 * Evidence: counters served at `/emulator/stats`, and the JSON-lines request log that
 * tests and benchmarks read. The CPU figures are this process's (`process.cpuUsage`) since start or the
 * last reset, so a benchmark running the emulator in its own process reads the emulator's CPU share.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { roundSecondsToMs } from '../schemas/units.ts';

export interface LogEntry {
  time: string;
  account?: string;
  method: string;
  endpoint: string;
  session?: string;
  chunk?: number;
  /** A file recognition request (its audio is `audioSeconds`, answered or refused). */
  file?: boolean;
  audioSeconds?: number;
  bytes?: number;
  status: number;
  /** Service code: envelope `status` for nlp, `errorinfo.code` for speech errors. */
  code?: number;
  messages?: string[];
  /** Temporary dictionary entries (`words`) of a start request. */
  words?: number;
  fault?: string;
  ms: number;
}

export class Stats {
  requests = 0;
  byEndpoint: Record<string, number> = {};
  byStatus: Record<string, number> = {};
  byCode: Record<string, number> = {};
  tokensIssued = 0;
  sessions = { started: 0, completed: 0, cancelled: 0, failed: 0 };
  chunks = 0;
  nonStandardChunks = 0;
  audioSeconds = 0;
  fileRecognitions = 0;
  /** Audio of the file requests answered, seconds. */
  fileAudioSeconds = 0;
  private cpuBase = process.cpuUsage();
  private timeBase = performance.now();

  record(entry: LogEntry): void {
    this.requests++;
    this.byEndpoint[entry.endpoint] = (this.byEndpoint[entry.endpoint] ?? 0) + 1;
    this.byStatus[entry.status] = (this.byStatus[entry.status] ?? 0) + 1;
    if (entry.code !== undefined && entry.code !== 0)
      this.byCode[entry.code] = (this.byCode[entry.code] ?? 0) + 1;
  }

  reset(): void {
    Object.assign(this, new Stats());
  }

  snapshot<T extends object>(extra: T) {
    const cpu = process.cpuUsage(this.cpuBase);
    const wallMs = performance.now() - this.timeBase;
    return {
      requests: this.requests,
      byEndpoint: this.byEndpoint,
      byStatus: this.byStatus,
      byCode: this.byCode,
      tokensIssued: this.tokensIssued,
      sessions: this.sessions,
      chunks: this.chunks,
      nonStandardChunks: this.nonStandardChunks,
      audioSeconds: roundSecondsToMs(this.audioSeconds),
      fileRecognitions: this.fileRecognitions,
      fileAudioSeconds: roundSecondsToMs(this.fileAudioSeconds),
      cpu: {
        userMs: cpu.user / 1000,
        systemMs: cpu.system / 1000,
        wallMs,
        /** CPU time over wall time: 1.0 is one core busy. */
        share: wallMs > 0 ? (cpu.user + cpu.system) / 1000 / wallMs : 0,
      },
      ...extra,
    };
  }
}

export class RequestLog {
  private stream: WriteStream | undefined;

  constructor(path: string | undefined) {
    if (path) this.stream = createWriteStream(path, { flags: 'a' });
  }

  write(entry: LogEntry): void {
    this.stream?.write(JSON.stringify(entry) + '\n');
  }

  close(): Promise<void> {
    const s = this.stream;
    if (!s) return Promise.resolve();
    this.stream = undefined;
    return new Promise((resolve) => s.end(resolve));
  }
}
