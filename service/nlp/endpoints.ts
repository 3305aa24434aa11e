/**
 * Path and result schema of every text-analysis endpoint (spec 01, Endpoints; spec 03, Summarization).
 * The five calls the pipeline makes have their own modules; the table also lets the golden-fixture test
 * (and any future call) parse every recorded response.
 */
import type { z } from 'zod';
import {
  companyNormalizationResultSchema,
  coreferenceResultSchema,
  fillerRemovalResultSchema,
  keywordResultSchema,
  misrecognitionResultSchema,
  namedEntityResultSchema,
  parseResultSchema,
  sentenceTypeResultSchema,
  sentimentResultSchema,
  similarityResultSchema,
  summaryResultSchema,
  userAttributeResultSchema,
} from '../../schemas/service-nlp.ts';

export interface NlpEndpoint {
  path: string;
  result: z.ZodType;
}

export const NLP_ENDPOINTS = {
  parse: { path: '/nlp/v1/parse', result: parseResultSchema },
  ne: { path: '/nlp/v1/ne', result: namedEntityResultSchema },
  normalizeCompany: { path: '/nlp/v1/normalize_ne/company', result: companyNormalizationResultSchema },
  coreference: { path: '/nlp/v1/coreference', result: coreferenceResultSchema },
  keyword: { path: '/nlp/v1/keyword', result: keywordResultSchema },
  similarity: { path: '/nlp/v1/similarity', result: similarityResultSchema },
  sentenceType: { path: '/nlp/v1/sentence_type', result: sentenceTypeResultSchema },
  userAttribute: { path: '/nlp/beta/user_attribute', result: userAttributeResultSchema },
  removeFiller: { path: '/nlp/beta/remove_filler', result: fillerRemovalResultSchema },
  detectMisrecognition: { path: '/nlp/beta/detect_misrecognition', result: misrecognitionResultSchema },
  sentiment: { path: '/nlp/v1/sentiment', result: sentimentResultSchema },
  /**
   * Spec 03 gives `/nlp/v1/summary`; the 2020 recording used `/nlp/beta/summary`. We follow the spec.
   */
  summary: { path: '/nlp/v1/summary', result: summaryResultSchema },
} as const satisfies Record<string, NlpEndpoint>;

export type NlpEndpointName = keyof typeof NLP_ENDPOINTS;

/** The endpoint of a path whatever its version segment (`/nlp/beta/summary` → `summary`). */
export function endpointOfPath(path: string): NlpEndpointName | undefined {
  const tail = path.replace(/^.*\/nlp\/(v\d+|beta)\//, '');
  return (Object.keys(NLP_ENDPOINTS) as NlpEndpointName[]).find(
    (name) => NLP_ENDPOINTS[name].path.replace(/^\/nlp\/(v\d+|beta)\//, '') === tail,
  );
}
