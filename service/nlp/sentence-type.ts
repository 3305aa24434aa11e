/** Sentence type classification (spec 01, Endpoints: `/nlp/v1/sentence_type`): modality and speech acts. */
import { sentenceTypeRequestSchema, type SentenceTypeResult } from '../../schemas/service-nlp.ts';
import type { ClientContext } from '../context.ts';
import { callNlp, type NlpCallOptions, type NlpResponse } from './call.ts';
import { NLP_ENDPOINTS } from './endpoints.ts';
import { validateRequest } from './validate.ts';

export interface SentenceTypeOptions extends NlpCallOptions {
  /** `kuzure` for colloquial text (spec 01, Shared request parameters); default the service's. */
  type?: 'default' | 'kuzure';
}

/** The modality (`declarative`, `interrogative`, …) and the speech acts (`dialog_act`) of a sentence. */
export async function sentenceType(
  ctx: ClientContext,
  sentence: string,
  options: SentenceTypeOptions = {},
): Promise<NlpResponse<SentenceTypeResult>> {
  const { path, result } = NLP_ENDPOINTS.sentenceType;
  // `type: null` as the recorded sample sent it (the service takes null for an unset optional field).
  const body = validateRequest(path, sentenceTypeRequestSchema, { sentence, type: options.type ?? null });
  return callNlp(ctx, path, body, result, options);
}
