/** Typed keys of the custom search attributes registered from schemas/search-attributes.ts. */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeName } from '../schemas/search-attributes.ts';

/** Fails to compile when a name here is not in the table the stack registers. */
function key<N extends SearchAttributeName, T extends SearchAttributeType>(name: N, type: T) {
  return defineSearchAttributeKey(name, type);
}

export const SEARCH_ATTRIBUTE_KEYS = {
  callId: key('CallpipeCallId', SearchAttributeType.KEYWORD),
  batchId: key('CallpipeBatchId', SearchAttributeType.KEYWORD),
  stage: key('CallpipeStage', SearchAttributeType.KEYWORD),
  outcome: key('CallpipeOutcome', SearchAttributeType.KEYWORD),
  audioSeconds: key('CallpipeAudioSeconds', SearchAttributeType.DOUBLE),
  speakers: key('CallpipeSpeakers', SearchAttributeType.INT),
  categories: key('CallpipeCategories', SearchAttributeType.KEYWORD_LIST),
  roles: key('CallpipeRoles', SearchAttributeType.KEYWORD),
} as const;
