/**
 * The names of callpipe's task queues (docs/design.md, Task queues and limits): one prefix, one queue per kind
 * of work. Pure TypeScript with no imports: workflow code may read it.
 */

/** The prefix of every queue unless `temporal.taskQueuePrefix` says otherwise. */
export const DEFAULT_TASK_QUEUE_PREFIX = 'callpipe';

/** The queues a recording's activities go to: probes apart, so a night's new calls never hold staging slots. */
export interface CallQueues {
  media: string;
  probe: string;
  asr: string;
  nlp: string;
}

/** Every queue of a deployment: the workflows' own (`<prefix>`), then one per kind of activity. */
export function taskQueuesOf(prefix: string): { workflows: string } & CallQueues {
  return {
    workflows: prefix,
    media: `${prefix}-media`,
    probe: `${prefix}-probe`,
    asr: `${prefix}-asr`,
    nlp: `${prefix}-nlp`,
  };
}
