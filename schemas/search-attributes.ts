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
} as const;

export type SearchAttributeName = keyof typeof SEARCH_ATTRIBUTES;
