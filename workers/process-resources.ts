/**
 * Every per-process resource a worker needs is sized from its configured limits (schemas/limits.ts), and
 * checked at start: a worker configured for 4,096 recognition sessions under `ulimit -n 1024`
 * refuses to start with the numbers and the fix, rather than failing sessions one by one with EMFILE
 * hours into a night.
 */
import { readFileSync } from 'node:fs';
import { fileDescriptorsFor, type ProcessLimits } from '../schemas/limits.ts';
import type { QueueName } from './workers.ts';

/** The limits of the queues this process serves: a queue it does not run needs nothing. */
function limitsOfQueues(limits: ProcessLimits, queues: readonly QueueName[]): ProcessLimits {
  return {
    asrConcurrentSessions: queues.includes('asr') ? limits.asrConcurrentSessions : 0,
    nlpConcurrency: queues.includes('nlp') ? limits.nlpConcurrency : 0,
    mediaConcurrency: queues.includes('media') ? limits.mediaConcurrency : 0,
    probeConcurrency: queues.includes('probe') ? limits.probeConcurrency : 0,
  };
}

/**
 * The soft limit of open files of this process (`ulimit -n`; Node raises it to the hard limit as it
 * starts), from /proc; undefined where there is no /proc or the limit is unlimited.
 */
export function openFileLimit(procLimits = '/proc/self/limits'): number | undefined {
  try {
    const line = readFileSync(procLimits, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}

export class ProcessResourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProcessResourceError';
  }
}

/** Throws a {@link ProcessResourceError} naming the limits, the need and the fix when they do not fit. */
export function checkProcessResources(
  limits: ProcessLimits,
  queues: readonly QueueName[],
  available = openFileLimit(),
): { fileDescriptors: number; available?: number } {
  const needed = fileDescriptorsFor(limitsOfQueues(limits, queues));
  if (available !== undefined && available < needed) {
    const own = limitsOfQueues(limits, queues);
    throw new ProcessResourceError(
      `this worker may open ${available} files (ulimit -n) but its limits need about ${needed} ` +
        `(CALLPIPE_ASR_CONCURRENT_SESSIONS=${own.asrConcurrentSessions}, CALLPIPE_NLP_CONCURRENCY=${own.nlpConcurrency}, ` +
        `CALLPIPE_MEDIA_CONCURRENCY=${own.mediaConcurrency}, CALLPIPE_PROBE_CONCURRENCY=${own.probeConcurrency}): ` +
        `raise the limit (ulimit -n ${needed}; LimitNOFILE= under systemd; ulimits.nofile in docker-compose) ` +
        `or lower those limits`,
    );
  }
  return { fileDescriptors: needed, ...(available !== undefined ? { available } : {}) };
}
