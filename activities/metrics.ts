/**
 * callpipe's own Prometheus metrics (prom-client), counted where the numbers are known: the recognition
 * activity (streams, audio, restarts) and the text steps (requests). The worker process serves them on
 * `config.stack.metricsPort` together with Temporal's runtime metrics (workers/runtime.ts).
 *
 * Labels are bounded sets (endpoint families, error kinds), never call ids or anything a user typed.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { processCpuSeconds } from './cost/process-cpu.ts';

export const registry = new Registry();

/** A counter or gauge registered on callpipe's registry: every metric below is one line of name and help. */
function counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) {
  return new Counter<L>({ name, help, labelNames, registers: [registry] });
}
function gauge(name: string, help: string) {
  return new Gauge({ name, help, registers: [registry] });
}

const requests = counter(
  'callpipe_service_requests_total',
  'Requests to the Language Analysis Service by endpoint (asr/stream, nlp/<step>) and outcome (ok or the error kind)',
  ['endpoint', 'outcome'],
);
const blocked = counter(
  'callpipe_service_99997_total',
  'Answers with code 99997 (request blocked: too many at once), by endpoint',
  ['endpoint'],
);
const openStreams = gauge('callpipe_asr_open_streams', 'Stream recognition sessions open in this process');
const audioSeconds = counter(
  'callpipe_asr_audio_seconds_recognized_total',
  'Seconds of audio streamed to recognition in sessions that completed',
);
const restarts = counter(
  'callpipe_asr_session_restarts_total',
  'New recognition sessions started after an error, resuming after the last final result',
);
const noResourceWaits = counter(
  'callpipe_asr_no_resource_waits_total',
  "Recognition sessions refused with 550 No Resource (the account's sessions all open) and started again after a wait, spending no restart",
);
const pace = gauge(
  'callpipe_asr_pace',
  'Recognition pace, × real time, that sessions of this process use when speed is auto (the last one found good)',
);
const redactions = counter(
  'callpipe_redactions_total',
  'Personal data redacted from call text, by kind (name, phone, …, or a kind of the deployment)',
  ['kind'],
);
const audioStreamed = counter(
  'callpipe_asr_audio_seconds_streamed_total',
  'Seconds of audio streamed to recognition, sessions that failed and were started again included (what the service bills)',
);
const s3Requests = counter(
  'callpipe_s3_requests_total',
  'Object-store requests sent by operation (PutObject, GetObject, HeadObject, ListObjectsV2…) and activity type (none outside an activity), each attempt of a retried one included',
  ['operation', 'activity_type'],
);
const heartbeatsSent = counter(
  'callpipe_activity_heartbeats_sent_total',
  "Activity heartbeats that reached the Temporal server (after the SDK's throttling: activities/cost/heartbeat-throttle.ts), by activity type",
  ['activity_type'],
);
const activityCpu = counter(
  'callpipe_activity_cpu_seconds_total',
  "The process's CPU seconds (its reaped children, ffmpeg, included) shared among the activities running when they were used, by activity type",
  ['activity_type'],
);
new Gauge({
  name: 'callpipe_process_cpu_seconds',
  help: 'CPU seconds this worker process used since it started: itself (part self) and its reaped children, ffmpeg (part children)',
  labelNames: ['part'],
  registers: [registry],
  collect() {
    const cpu = processCpuSeconds();
    this.set({ part: 'self' }, cpu.self);
    this.set({ part: 'children' }, cpu.children);
  },
});
const fileAudio = counter(
  'callpipe_asr_file_audio_seconds_total',
  'Seconds of audio recognized by file requests (pieces of at most 58 s), retried ones included',
);
const fileRtf = new Gauge({
  name: 'callpipe_asr_file_rtf',
  help: "The running real-time factor of this process's file recognition requests (request seconds ÷ audio seconds), by model: what recognition auto decides by",
  labelNames: ['model'],
  registers: [registry],
});
const speakerRoles = counter(
  'callpipe_speaker_roles_total',
  'Calls by how their speakers were named (configured, swapped, fixed, inferred, low-confidence, unknown) and source (channels, voices)',
  ['decision', 'source'],
);

function errorKind(err: unknown): { outcome: string; code?: number } {
  const e = err as { name?: string; kind?: string; code?: unknown } | undefined;
  if (e?.name === 'ServiceError' && typeof e.kind === 'string') {
    const code = Number(e.code);
    return { outcome: e.kind, ...(Number.isFinite(code) ? { code } : {}) };
  }
  return { outcome: e?.name === 'AbortError' ? 'cancelled' : 'error' };
}

export const metrics = {
  /** `count` requests that went well. */
  requestsOk(endpoint: string, count = 1): void {
    if (count > 0) requests.inc({ endpoint, outcome: 'ok' }, count);
  },
  /** One request that failed with `err` (a ServiceError gives its kind and code). */
  requestFailed(endpoint: string, err: unknown): void {
    const { outcome, code } = errorKind(err);
    requests.inc({ endpoint, outcome });
    if (code === 99997) blocked.inc({ endpoint });
  },
  /** Runs one request and counts its outcome. */
  async observe<T>(endpoint: string, request: () => Promise<T>): Promise<T> {
    try {
      const out = await request();
      metrics.requestsOk(endpoint);
      return out;
    } catch (err) {
      metrics.requestFailed(endpoint, err);
      throw err;
    }
  },
  streamOpened(): void {
    openStreams.inc();
  },
  streamClosed(): void {
    openStreams.dec();
  },
  audioRecognized(seconds: number): void {
    if (seconds > 0) audioSeconds.inc(seconds);
  },
  /** Audio a recognition stream sent, whether it completed or failed. */
  audioStreamed(seconds: number): void {
    if (seconds > 0) audioStreamed.inc(seconds);
  },
  /** One object-store request (one attempt) of `operation`, sent by an activity of `activityType`. */
  s3Request(operation: string, activityType: string): void {
    s3Requests.inc({ operation, activity_type: activityType });
  },
  heartbeatsSent(activityType: string, count: number): void {
    if (count > 0) heartbeatsSent.inc({ activity_type: activityType }, count);
  },
  activityCpu(activityType: string, seconds: number): void {
    if (seconds > 0) activityCpu.inc({ activity_type: activityType }, seconds);
  },
  restarted(): void {
    restarts.inc();
  },
  noResourceWait(): void {
    noResourceWaits.inc();
  },
  /** Audio of one file request, answered or not. */
  fileAudio(seconds: number): void {
    if (seconds > 0) fileAudio.inc(seconds);
  },
  fileRtf(model: string, rtf: number): void {
    fileRtf.set({ model }, rtf);
  },
  pace(rate: number): void {
    pace.set(rate);
  },
  /** Redactions of one call by kind (the kinds are a bounded set: built-in ones and the configuration's). */
  /** A call's roles decided by the speakers stage (a swapped channel map or inferred voices, counted). */
  speakerRoles(decision: string, source: string): void {
    speakerRoles.inc({ decision, source });
  },
  redacted(counts: Record<string, number>): void {
    for (const [kind, n] of Object.entries(counts)) if (n > 0) redactions.inc({ kind }, n);
  },
};
