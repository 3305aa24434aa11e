// The workflow bundle's entry: re-exports only.
export { stackCheck } from './stack-check.ts';
export { processRecording, progressQuery } from './process-recording.ts';
export { backfill, backfillProgressQuery, pauseUpdate, resumeUpdate, cancelUpdate } from './backfill.ts';
export { nightlyBackfill } from './nightly.ts';
export { watch, watchStatusQuery, stopWatchUpdate, configureWatchUpdate } from './watch.ts';
export { eventDelivery } from './event-delivery.ts';
export { rescore, rescoreProgressQuery } from './rescore.ts';
export {
  sessionBudget,
  acquireSessionsUpdate,
  releaseSessionsSignal,
  renewSessionsSignal,
  sessionBudgetQuery,
} from './session-budget.ts';
export { forget } from './forget.ts';
export { retention } from './retention.ts';
