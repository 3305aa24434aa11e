/** Sentiment analysis (spec 01, Endpoints: `/nlp/v1/sentiment`). */
import { sentimentRequestSchema, type SentimentResult } from '../../schemas/service-nlp.ts';
import type { ClientContext } from '../context.ts';
import { callNlp, type NlpCallOptions, type NlpResponse } from './call.ts';
import { NLP_ENDPOINTS } from './endpoints.ts';
import { validateRequest } from './validate.ts';

/** Sentiment of one sentence: label, score and emotional phrases (`emotion` may join labels with commas). */
export async function sentiment(
  ctx: ClientContext,
  sentence: string,
  options: NlpCallOptions = {},
): Promise<NlpResponse<SentimentResult>> {
  const { path, result } = NLP_ENDPOINTS.sentiment;
  const body = validateRequest(path, sentimentRequestSchema, { sentence });
  return callNlp(ctx, path, body, result, options);
}
