/** Misrecognition detection (spec 01, Endpoints: `/nlp/beta/detect_misrecognition`, beta). */
import { sentimentRequestSchema, type MisrecognitionResult } from '../../schemas/service-nlp.ts';
import type { ClientContext } from '../context.ts';
import { callNlp, type NlpCallOptions, type NlpResponse } from './call.ts';
import { NLP_ENDPOINTS } from './endpoints.ts';
import { validateRequest } from './validate.ts';

/** How misrecognized one sentence is (0–1), and the suspect spans with suggested corrections. */
export async function detectMisrecognition(
  ctx: ClientContext,
  sentence: string,
  options: NlpCallOptions = {},
): Promise<NlpResponse<MisrecognitionResult>> {
  const { path, result } = NLP_ENDPOINTS.detectMisrecognition;
  // The same body as sentiment's: one required `sentence`.
  const body = validateRequest(path, sentimentRequestSchema, { sentence });
  return callNlp(ctx, path, body, result, options);
}
