/** Filler removal (spec 01, Endpoints: `/nlp/beta/remove_filler`). */
import { removeFillerRequestSchema, type FillerRemovalResult } from '../../schemas/service-nlp.ts';
import type { ClientContext } from '../context.ts';
import { callNlp, type NlpCallOptions, type NlpResponse } from './call.ts';
import { NLP_ENDPOINTS } from './endpoints.ts';
import { validateRequest } from './validate.ts';

export interface RemoveFillerOptions extends NlpCallOptions {
  /** Split the text into sentences first; set for text without punctuation (spec 01). Default false. */
  doSegment?: boolean;
}

/** Removes fillers from `text`; one result object per sentence when `doSegment` splits it. */
export async function removeFiller(
  ctx: ClientContext,
  text: string,
  options: RemoveFillerOptions = {},
): Promise<NlpResponse<FillerRemovalResult>> {
  const { path, result } = NLP_ENDPOINTS.removeFiller;
  const body = validateRequest(path, removeFillerRequestSchema, {
    text,
    do_segment: options.doSegment ?? false,
  });
  return callNlp(ctx, path, body, result, options);
}
