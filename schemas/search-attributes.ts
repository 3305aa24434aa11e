/**
 * Custom search attributes of callpipe's workflows. The local stack registers exactly these when it
 * starts the Temporal dev server (upserting an unregistered one fails the workflow task forever), and
 * operators filter on them in the Web UI, e.g. `CallpipeBatchId = "…" AND CallpipeOutcome = "failed"`.
 */
export const SEARCH_ATTRIBUTES = {
  CallpipeCallId: 'Keyword',
  CallpipeBatchId: 'Keyword',
  CallpipeStage: 'Keyword',
  CallpipeOutcome: 'Keyword',
  CallpipeAudioSeconds: 'Double',
  CallpipeSpeakers: 'Int',
  /** Matched categories of the rule file (`CallpipeCategories = "complaint"`), set when the call is written. */
  CallpipeCategories: 'KeywordList',
  /**
   * How the call's roles were decided (schemas/speakers.ts ROLE_DECISIONS): `swapped` against the channel
   * map, `inferred` from voices of a mono call, `low-confidence`… (`CallpipeRoles = "swapped"`).
   */
  CallpipeRoles: 'Keyword',
} as const;

export type SearchAttributeName = keyof typeof SEARCH_ATTRIBUTES;
