/** Named entity extraction (spec 01, Endpoints: `/nlp/v1/ne`). */
import { namedEntityRequestSchema, type NamedEntityResult } from '../../schemas/service-nlp.ts';
import type { ClientContext } from '../context.ts';
import { callNlp, type NlpCallOptions, type NlpResponse } from './call.ts';
import { NLP_ENDPOINTS } from './endpoints.ts';
import { validateRequest } from './validate.ts';

export interface NamedEntityOptions extends NlpCallOptions {
  /** `kuzure` for sentences with lengthened words; default `default`. */
  type?: 'default' | 'kuzure';
  /** Technical-term dictionaries, Enterprise accounts only (spec 01, Rule 3). */
  dicType?: string[];
}

/** The named entities of `sentence`, with character positions into it (`end_pos` one past the end). */
export async function namedEntities(
  ctx: ClientContext,
  sentence: string,
  options: NamedEntityOptions = {},
): Promise<NlpResponse<NamedEntityResult>> {
  const { path, result } = NLP_ENDPOINTS.ne;
  const body = validateRequest(path, namedEntityRequestSchema, {
    sentence,
    ...(options.type ? { type: options.type } : {}),
    ...(options.dicType ? { dic_type: options.dicType } : {}),
  });
  return callNlp(ctx, path, body, result, options);
}
