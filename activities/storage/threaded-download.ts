/**
 * Source downloads on a thread of their own. A worker's main thread runs every activity of the process
 * (channel analysis, multipart bodies, the Temporal SDK's own work); a download there takes a turn of that
 * loop for each socket read, its SHA-256 and its file writes, and on a busy worker a 250-MB WAV took 15 s
 * instead of 1.4 s (bench/README.md, issue 38). On its own thread the download keeps its pace, and the
 * activities keep the main thread. One thread per process, started on the first download and never
 * keeping the process alive; several downloads run on it at once.
 */
import { Worker } from 'node:worker_threads';
import type { S3Config } from '../../schemas/config.ts';
import { activityContext } from '../activity-context.ts';
import { metrics } from '../metrics.ts';
import type { HashedDownload, HashedFile } from './hashed-file.ts';

/** A download asked of the thread. */
export interface DownloadRequest {
  id: number;
  s3: S3Config;
  /** The thread's client for this store is made with these (`createS3Client`'s options). */
  clientOptions: { maxSockets?: number; maxAttempts: number };
  bucket: string;
  key: string;
  path: string;
}

/** The thread's answer: the file's digest, or what the store (or the disk) said. */
export type DownloadAnswer =
  | ({ id: number; ok: true } & HashedFile)
  | { id: number; ok: false; error: { name: string; message: string; status?: number; code?: string } };

/**
 * The thread sends each request once (the SDK's own retries off): Temporal's attempts retry the activity,
 * as for the workers' other S3 requests, and the one GetObject is counted here, where the activity is known.
 */
const THREAD_MAX_ATTEMPTS = 1;

let thread: Worker | undefined;
let nextId = 0;
const pending = new Map<number, { resolve: (sha256: string) => void; reject: (err: Error) => void }>();

/** The error the store's answer was, with the fields `s3-errors.ts` reads (status, code). */
function errorOf(error: Extract<DownloadAnswer, { ok: false }>['error']): Error {
  const err = new Error(error.message) as Error & { $metadata?: { httpStatusCode?: number }; Code?: string };
  err.name = error.name;
  if (error.status !== undefined) err.$metadata = { httpStatusCode: error.status };
  if (error.code !== undefined) err.Code = error.code;
  return err;
}

function failAll(err: Error): void {
  for (const { reject } of pending.values()) reject(err);
  pending.clear();
}

function downloadThread(): Worker {
  if (thread) return thread;
  const started = new Worker(new URL('./download-thread.ts', import.meta.url));
  started.unref();
  started.on('message', (answer: DownloadAnswer) => {
    const waiting = pending.get(answer.id);
    if (!waiting) return;
    pending.delete(answer.id);
    if (answer.ok) waiting.resolve(answer.sha256);
    else waiting.reject(errorOf(answer.error));
  });
  // A thread that failed takes its downloads with it; the next download starts a new one.
  started.on('error', (err) => failAll(new Error(`the download thread failed: ${err.message}`)));
  started.on('exit', (code) => {
    if (thread === started) thread = undefined;
    failAll(new Error(`the download thread ended (exit code ${code})`));
  });
  return (thread = started);
}

/** Downloads from the store `s3` names on the process's download thread. */
export function threadedDownload(s3: S3Config, clientOptions: { maxSockets?: number } = {}): HashedDownload {
  return ({ bucket, key }, path) =>
    new Promise<string>((resolve, reject) => {
      const id = ++nextId;
      const worker = downloadThread();
      pending.set(id, { resolve, reject });
      metrics.s3Request('GetObject', activityContext()?.info.activityType ?? 'none');
      const request: DownloadRequest = {
        id,
        s3,
        clientOptions: { ...clientOptions, maxAttempts: THREAD_MAX_ATTEMPTS },
        bucket,
        key,
        path,
      };
      worker.postMessage(request);
    });
}
