export { createNlpActivities, type NlpActivities } from './nlp-activities.ts';
export type { NlpActivityDeps, NlpActivityOptions } from './step.ts';
export * from './types.ts';
export {
  NLP_FAILURE_TYPES,
  DEFAULT_QUOTA_DELAY_MS,
  stepErrorOutcome,
  type FailurePolicy,
} from './failures.ts';
