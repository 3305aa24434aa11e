/**
 * Personal data in a call: the kinds callpipe detects, how each is masked, what a deployment
 * adds of its own, and the record of one redaction, which holds the kind and the position, never the
 * value.
 *
 * Glossary: a *span* is a stretch of one utterance's text found to hold personal data; its *mask* is
 * what replaces it in every stored text (`[電話番号]`); a *record* is what result.json keeps of it (kind,
 * where the mask is, which detector found it); *unredacted* means the text as recognized.
 */
import { z } from 'zod';
import { userPatternSchema } from './user-pattern.ts';

/** The kinds callpipe detects itself, most specific first (an overlap takes the earlier kind). */
export const REDACTION_KINDS = [
  'cardNumber',
  'myNumber',
  'phone',
  'email',
  'birthDate',
  'postalCode',
  'bankAccount',
  'name',
  'address',
  'age',
  'idNumber',
] as const;
export type BuiltInKind = (typeof REDACTION_KINDS)[number];

/** A kind of the deployment's own (its extra terms and patterns): a short identifier. */
const CUSTOM_KIND = /^[a-z][A-Za-z0-9]{0,31}$/;
const customKindSchema = z
  .string()
  .regex(CUSTOM_KIND, 'a kind is a short identifier: a lower-case letter, then letters and digits')
  .refine((k) => !(REDACTION_KINDS as readonly string[]).includes(k), 'names a built-in kind');

/** The mask of each built-in kind unless configured otherwise. */
export const DEFAULT_MASK_LABELS: Readonly<Record<BuiltInKind, string>> = {
  cardNumber: '[カード番号]',
  myNumber: '[マイナンバー]',
  phone: '[電話番号]',
  email: '[メールアドレス]',
  birthDate: '[生年月日]',
  postalCode: '[郵便番号]',
  bankAccount: '[口座番号]',
  name: '[氏名]',
  address: '[住所]',
  age: '[年齢]',
  idNumber: '[番号]',
};

/** Kinds whose values are digits: only these can keep their last digits visible. */
const DIGIT_KINDS: readonly BuiltInKind[] = [
  'cardNumber',
  'myNumber',
  'phone',
  'postalCode',
  'bankAccount',
  'idNumber',
];

/**
 * How one kind is masked: its label (`[電話番号]`); the label and the value's last digits
 * (`[電話番号 ***5678]`, digit kinds only, as card receipts do); or `off`: not redacted at all.
 */
const maskSchema = z.discriminatedUnion('style', [
  z.object({ style: z.literal('label'), label: z.string().min(1).max(40).optional() }),
  z.object({
    style: z.literal('keepLast'),
    digits: z.number().int().min(1).max(6),
    label: z.string().min(1).max(40).optional(),
  }),
  z.object({ style: z.literal('off') }),
]);
export type Mask = z.infer<typeof maskSchema>;

/**
 * Bounds of the deployment's own rules (inline or `redaction.rulesFile`): a rules file's bytes are
 * checked before it is parsed, so a file of millions of terms is refused at once instead of filling memory.
 */
export const REDACTION_RULE_LIMITS = {
  fileBytes: 4 * 1024 * 1024,
  terms: 10_000,
  termLength: 200,
  patterns: 200,
} as const;

/** A term of the deployment's own, matched literally (NFKC, case-insensitive), e.g. a VIP list. */
const redactionTermSchema = z.object({
  kind: customKindSchema,
  text: z.string().min(1).max(REDACTION_RULE_LIMITS.termLength),
  label: z.string().min(1).max(40).optional(),
});

/** A pattern of the deployment's own, e.g. a contract number format; matched on the NFKC text with digits spelled out. */
const redactionPatternSchema = z.object({
  kind: customKindSchema,
  // Run on RE2, in linear time (schemas/user-pattern.ts): what it cannot run is refused here.
  regex: userPatternSchema,
  label: z.string().min(1).max(40).optional(),
});
export type RedactionTerm = z.infer<typeof redactionTermSchema>;
export type RedactionPattern = z.infer<typeof redactionPatternSchema>;

/**
 * What the text workers use to redact: masks per kind, and the deployment's extra terms and patterns.
 * Terms and patterns may themselves be personal (a list of customers' names): they stay in the workers'
 * configuration and never travel in a workflow's input or history.
 */
export const redactionRulesSchema = z
  .object({
    masks: z
      .record(z.string(), maskSchema)
      .default({})
      .refine(
        (masks) =>
          Object.entries(masks).every(
            ([kind, mask]) => mask.style !== 'keepLast' || (DIGIT_KINDS as readonly string[]).includes(kind),
          ),
        `keepLast applies to digit kinds only (${DIGIT_KINDS.join(', ')})`,
      ),
    terms: z.array(redactionTermSchema).max(REDACTION_RULE_LIMITS.terms).default([]),
    patterns: z.array(redactionPatternSchema).max(REDACTION_RULE_LIMITS.patterns).default([]),
  })
  .superRefine((rules, ctx) => {
    const known = new Set<string>([
      ...REDACTION_KINDS,
      ...rules.terms.map((t) => t.kind),
      ...rules.patterns.map((p) => p.kind),
    ]);
    for (const kind of Object.keys(rules.masks)) {
      if (!known.has(kind)) {
        ctx.addIssue({
          code: 'custom',
          path: ['masks', kind],
          message: `no such kind: one of ${REDACTION_KINDS.join(', ')} or a kind of the terms and patterns`,
        });
      }
    }
  });
export type RedactionRules = z.infer<typeof redactionRulesSchema>;

/** The detectors, as a record names them: named-entity extraction, our patterns, the deployment's terms and patterns. */
export const REDACTION_SOURCES = ['ne', 'pattern', 'term'] as const;
export type RedactionSource = (typeof REDACTION_SOURCES)[number];

/** One redaction as result.json keeps it: the mask's place in the stored `text`, never the value. */
export const redactionRecordSchema = z
  .object({
    kind: z.string().min(1).describe('name, phone, address, … or a kind of the deployment'),
    begin: z.number().int().nonnegative().describe('start of the mask in the utterance text, UTF-16 units'),
    end: z.number().int().nonnegative().describe('exclusive end of the mask'),
    source: z.enum(REDACTION_SOURCES).describe('ne (named entities), pattern, or term (the deployment’s)'),
    digest: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional()
      .describe(
        'keyed digest (HMAC-SHA-256) of the masked value, normalized per kind, for `callpipe find`; ' +
          'absent when no digest key is configured',
      ),
  })
  .meta({ id: 'Redaction' });
export type RedactionRecord = z.infer<typeof redactionRecordSchema>;

/** A record with where the value was in the recognized text: staging only (the unredacted copy needs it). */
export const stagedRedactionSchema = redactionRecordSchema.extend({
  originalBegin: z.number().int().nonnegative(),
  originalEnd: z.number().int().nonnegative(),
});
export type StagedRedaction = z.infer<typeof stagedRedactionSchema>;
