/**
 * Messages of the text-analysis (`nlp`) endpoints: request bodies of the calls the client makes and the
 * `result` of every endpoint in spec 01 and of summarization (spec 03). Fields the spec marks as
 * possibly absent are optional; unknown extra fields are kept (the service adds fields over time, e.g.
 * `source` on named entities), so a response never fails for something we do not read.
 */
import { z } from 'zod';

/** Success envelope (spec 01, Common response envelope); `message` is absent on `summary` (as the real service answers it). */
export function successEnvelopeSchema<T extends z.ZodType>(result: T) {
  return z.object({ result, status: z.literal(0), message: z.string().optional() });
}

// --- requests ------------------------------------------------------------------------------------

/** `/nlp/beta/remove_filler` request (spec 01, Endpoints). */
export const removeFillerRequestSchema = z.object({
  text: z.string().min(1, 'text must not be empty'),
  do_segment: z.boolean().optional(),
});

/** Summarization limits (spec 03, Summarization and Limits). */
export const SUMMARY_DOCUMENT_MIN_CHARS = 10;
export const SUMMARY_DOCUMENT_MAX_CHARS = 5000;
const SUMMARY_SENT_LEN = { min: 1, max: 100 } as const;
const SUMMARY_CHAR_LEN = { min: 10, max: 2500 } as const;

/** `/nlp/v1/summary` request (spec 03, Summarization). Exactly one of `sent_len` and `char_len`. */
export const summaryRequestSchema = z
  .object({
    document: z.string(),
    mode: z.enum(['extract', 'extract-cc']),
    sent_len: z.number().int().min(SUMMARY_SENT_LEN.min).max(SUMMARY_SENT_LEN.max).optional(),
    char_len: z.number().int().min(SUMMARY_CHAR_LEN.min).max(SUMMARY_CHAR_LEN.max).optional(),
    lang: z.string().length(2).optional(),
  })
  .refine((r) => (r.sent_len === undefined) !== (r.char_len === undefined), {
    message: 'exactly one of sent_len and char_len is required',
    path: ['sent_len'],
  })
  .refine((r) => r.mode === 'extract-cc' || r.lang !== undefined, {
    message: 'lang is required for mode extract',
    path: ['lang'],
  });

/** `/nlp/v1/sentiment` request. */
export const sentimentRequestSchema = z.object({ sentence: z.string().min(1, 'sentence must not be empty') });

/** `/nlp/v1/ne` request (spec 01, Endpoints: `sentence` required; `type`; `dic_type`). */
export const namedEntityRequestSchema = z.object({
  sentence: z.string().min(1, 'sentence must not be empty'),
  type: z.enum(['default', 'kuzure']).optional(),
  dic_type: z.array(z.string()).optional(),
});

/** `/nlp/v1/sentence_type` request (spec 01, Endpoints): one sentence; `type` as the sample sent it. */
export const sentenceTypeRequestSchema = z.object({
  sentence: z.string().min(1, 'sentence must not be empty'),
  type: z.enum(['default', 'kuzure']).nullable(),
});

/** `/nlp/v1/keyword` request; the document as an array of sentences (spec 01, Rules 2 and 4). */
export const keywordRequestSchema = z.object({
  document: z.union([z.string().min(1), z.array(z.string()).min(1)]),
  type: z.enum(['default', 'kuzure']).optional(),
  do_segment: z.boolean().optional(),
  max_keyword_num: z.number().int().positive().optional(),
  dic_type: z.array(z.string()).optional(),
});

// --- results ---------------------------------------------------------------------------------------

const position = z.number().int().nonnegative();

export const fillerRemovalResultSchema = z.array(
  z.looseObject({
    fillers: z.array(z.looseObject({ begin_pos: position, end_pos: position, form: z.string() })),
    normalized_sentence: z.string(),
    fixed_sentence: z.string(),
  }),
);
export type FillerRemovalResult = z.infer<typeof fillerRemovalResultSchema>;

export const summaryResultSchema = z.string();

/** Sentiment labels of an emotional phrase (spec 01, "Sentiment labels"): what a sentiment rule's `emotions` name. */
export const SENTIMENT_EMOTIONS = [
  '喜ぶ',
  '怒る',
  '悲しい',
  '不安',
  '恥ずかしい',
  '好ましい',
  '嫌',
  '興奮',
  '安心',
  '驚く',
  '切ない',
  '願望',
  'P',
  'N',
  'PN',
] as const;

export const sentimentResultSchema = z.looseObject({
  sentiment: z.enum(['Positive', 'Negative', 'Neutral']),
  score: z.number(),
  emotional_phrase: z.array(z.looseObject({ form: z.string(), emotion: z.string() })),
});
export type SentimentResult = z.infer<typeof sentimentResultSchema>;

export const keywordResultSchema = z.array(z.looseObject({ form: z.string(), score: z.number() }));
export type KeywordResult = z.infer<typeof keywordResultSchema>;

export const parseResultSchema = z.array(
  z.looseObject({
    chunk_info: z.looseObject({
      id: z.number().int(),
      head: z.number().int(),
      dep: z.string(),
      chunk_head: z.number().int(),
      chunk_func: z.number().int(),
      links: z.array(z.looseObject({ link: z.number().int(), label: z.string() })),
      predicate: z.array(z.string()).optional(),
    }),
    tokens: z.array(
      z.looseObject({
        id: z.number().int(),
        form: z.string(),
        kana: z.string(),
        lemma: z.string(),
        pos: z.string(),
        features: z.array(z.string()),
        dependency_labels: z
          .array(z.looseObject({ token_id: z.number().int(), label: z.string() }))
          .optional(),
        attributes: z.record(z.string(), z.unknown()).optional(),
      }),
    ),
  }),
);

export const namedEntityResultSchema = z.array(
  z.looseObject({
    begin_pos: position,
    end_pos: position,
    form: z.string(),
    std_form: z.string(),
    class: z.string(),
    extended_class: z.string(),
    info: z.string().optional(),
    source: z.string().optional(),
  }),
);
export type NamedEntityResult = z.infer<typeof namedEntityResultSchema>;

export const companyNormalizationResultSchema = z.array(
  z.looseObject({
    begin_pos: position,
    end_pos: position,
    form: z.string(),
    normalized: z.array(
      z.looseObject({ form: z.string(), distance: z.number(), std_forms: z.array(z.string()) }),
    ),
  }),
);

export const coreferenceResultSchema = z.looseObject({
  coreference: z.array(
    z.looseObject({
      representative_id: z.number().int(),
      referents: z.array(
        z.looseObject({
          referent_id: z.number().int(),
          sentence_id: z.number().int(),
          token_id_from: z.number().int(),
          token_id_to: z.number().int(),
          form: z.string(),
        }),
      ),
    }),
  ),
  tokens: z.array(z.array(z.string())),
});

export const similarityResultSchema = z.looseObject({ score: z.number().min(0).max(1) });

/** Spec 01, Enumerations: speech acts of `/nlp/v1/sentence_type`. */
export const DIALOG_ACTS = [
  'greeting',
  'information-providing',
  'feedback',
  'information-seeking',
  'agreement',
  'feedbackElicitation',
  'commissive',
  'acceptOffer',
  'selfCorrection',
  'thanking',
  'apology',
  'stalling',
  'directive',
  'goodbye',
  'declineOffer',
  'turnAssign',
  'pausing',
  'acceptApology',
  'acceptThanking',
] as const;
export type DialogAct = (typeof DIALOG_ACTS)[number];

export const sentenceTypeResultSchema = z.looseObject({
  modality: z.string(),
  dialog_act: z.array(z.string()),
});
export type SentenceTypeResult = z.infer<typeof sentenceTypeResultSchema>;

/** User attributes: every field optional (the sample returns only the ones it estimated). */
export const userAttributeResultSchema = z.looseObject({
  age: z.string().optional(),
  civilstatus: z.string().optional(),
  earnings: z.string().optional(),
  gender: z.string().optional(),
  habit: z.array(z.string()).optional(),
  hobby: z.array(z.string()).optional(),
  kind_of_business: z.string().optional(),
  kind_of_occupation: z.string().optional(),
  location: z.string().optional(),
  moving: z.array(z.string()).optional(),
  occupation: z.string().optional(),
  position: z.string().optional(),
});

export const misrecognitionResultSchema = z.looseObject({
  score: z.number(),
  candidates: z.array(
    z.looseObject({
      begin_pos: position,
      end_pos: position,
      form: z.string(),
      detect_score: z.number(),
      correction: z.array(z.looseObject({ form: z.string(), correct_score: z.number() })),
    }),
  ),
});
export type MisrecognitionResult = z.infer<typeof misrecognitionResultSchema>;
