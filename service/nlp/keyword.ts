/** Keyword extraction (spec 01, Endpoints: `/nlp/v1/keyword`). */
import { keywordRequestSchema, type KeywordResult } from '../../schemas/service-nlp.ts';
import type { ClientContext } from '../context.ts';
import { callNlp, type NlpCallOptions, type NlpResponse } from './call.ts';
import { NLP_ENDPOINTS } from './endpoints.ts';
import { validateRequest } from './validate.ts';

/** Service default of `max_keyword_num` (spec 01, Endpoints). */
const DEFAULT_MAX_KEYWORDS = 5;

export interface KeywordOptions extends NlpCallOptions {
  /** At most this many keywords (spec 01, Rule 4); default 5. */
  maxKeywords?: number;
  /** `kuzure` for sentences with lengthened words; default `default`. */
  type?: 'default' | 'kuzure';
  /** Technical-term dictionaries, Enterprise accounts only (spec 01, Rule 3). */
  dicType?: string[];
}

/**
 * Keywords of a document given as an array of sentences (already separated, so `do_segment` is moot,
 * spec 01 Rule 2), ordered by descending score.
 */
export async function keyword(
  ctx: ClientContext,
  sentences: string[],
  options: KeywordOptions = {},
): Promise<NlpResponse<KeywordResult>> {
  const { path, result } = NLP_ENDPOINTS.keyword;
  const nonEmpty = sentences.filter((s) => s.trim() !== '');
  const body = validateRequest(path, keywordRequestSchema, {
    document: nonEmpty,
    max_keyword_num: options.maxKeywords ?? DEFAULT_MAX_KEYWORDS,
    ...(options.type ? { type: options.type } : {}),
    ...(options.dicType ? { dic_type: options.dicType } : {}),
  });
  return callNlp(ctx, path, body, result, options);
}
