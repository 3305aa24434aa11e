/**
 * An activity attempt an asr worker runs, as the account's session budget is told of it
 * (workflows/session-budget.ts): enough to fail that very attempt by id (workflow id, run id, activity id,
 * attempt). Ids only: workflow ids are kept free of personal data.
 */
export type RunningActivity = [workflowId: string, runId: string, activityId: string, attempt: number];

/** One running attempt's identity in the budget's sets and the worker's. */
export function runningKey(a: RunningActivity): string {
  return JSON.stringify(a);
}
