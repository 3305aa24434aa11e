/**
 * The activities an asr worker process runs, as the account's session budget is to be told of them: the
 * budget fails them by id when the process stops renewing (workflows/session-budget.ts). Told on the
 * renew the process sends anyway (workers/session-budget-client.ts) as what started and ended since the
 * last renew that reached the budget, so a renew carries a few ids, not every running one.
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { runningKey, type RunningActivity } from '../schemas/running-activity.ts';

/** What one renew tells. */
export interface RunningDelta {
  started: RunningActivity[];
  ended: RunningActivity[];
}

export class RunningActivities {
  private readonly running = new Map<string, RunningActivity>();
  private readonly untoldStarts = new Map<string, RunningActivity>();
  private readonly untoldEnds = new Map<string, RunningActivity>();
  /** Called when an activity starts: the budget should hear of it soon, not at the next periodic renew. */
  onStart: (() => void) | undefined;

  get size(): number {
    return this.running.size;
  }

  start(a: RunningActivity): void {
    const key = runningKey(a);
    this.running.set(key, a);
    this.untoldStarts.set(key, a);
    this.onStart?.();
  }

  end(a: RunningActivity): void {
    const key = runningKey(a);
    this.running.delete(key);
    // Never told of: nothing to take back.
    if (!this.untoldStarts.delete(key)) this.untoldEnds.set(key, a);
  }

  /** What the budget has not been told yet; {@link restore} it when the renew carrying it failed. */
  take(): RunningDelta {
    const delta = { started: [...this.untoldStarts.values()], ended: [...this.untoldEnds.values()] };
    this.untoldStarts.clear();
    this.untoldEnds.clear();
    return delta;
  }

  restore(delta: RunningDelta): void {
    for (const a of delta.started) {
      const key = runningKey(a);
      if (this.running.has(key)) this.untoldStarts.set(key, a);
    }
    for (const a of delta.ended) {
      const key = runningKey(a);
      if (!this.running.has(key)) this.untoldEnds.set(key, a);
    }
  }

  /** For the asr worker (`interceptors.activity`): every activity it runs, from start to end. */
  readonly interceptor: ActivityInterceptorsFactory = (ctx) => ({
    inbound: {
      execute: async (input, next) => {
        const execution = ctx.info.workflowExecution;
        if (!execution) return next(input);
        const a: RunningActivity = [
          execution.workflowId,
          execution.runId,
          ctx.info.activityId,
          ctx.info.attempt,
        ];
        this.start(a);
        try {
          return await next(input);
        } finally {
          this.end(a);
        }
      },
    },
  });
}
