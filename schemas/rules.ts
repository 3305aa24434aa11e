/**
 * The rule file of call insights: the thresholds of the call metrics, categories (each `all` or `any` of
 * rules) and a scorecard of weighted questions answered by rules or categories. YAML or JSON
 * (activities/insights/rule-file.ts reads it); published as JSON Schema in `rules.schema.json`
 * (`node scripts/on-node.mjs ts schemas/generate-json-schema.ts`). callpipe ships a default for Japanese call centers,
 * `activities/insights/default-rules.ja.yaml`, documented in docs/insights.md.
 *
 * Versioning: `format` is the version of this file's shape (raised on an incompatible change to this
 * schema); `name` and `version` are the author's and are recorded with every result scored by the file,
 * beside the file's digest, so a result says which rules produced its categories.
 *
 * Glossary: a *rule* tests one thing of a call (a phrase said, a sentiment, a silence, an overlap, a
 * hold, a metric, a dialog act, redacted personal data) and yields the *points* (utterances or events,
 * with times) where it held; a *category* combines rules; a *question* of the scorecard is answered
 * yes, no or not applicable by a rule or a category, and weighs `weight` points.
 */
import { z } from 'zod';
import { DIALOG_ACTS, SENTIMENT_EMOTIONS } from './service-nlp.ts';
import { userPatternSchema } from './user-pattern.ts';
import { roleSettingsSchema } from './speakers.ts';
import { TRAINING_LIMITS } from './classifier-limits.ts';

/** Version of the rule file's shape. */
export const RULES_FORMAT_VERSION = 1;

/**
 * Bounds of a rule file, so a user's file can neither exhaust the memory of the command that reads it
 * nor make scoring slow: scoring tests every rule on every utterance and every term against every
 * utterance, so its work per call is bounded by (`rules` + `terms`) × the call's utterances.
 * `fileBytes` is checked before the file is parsed (activities/user-file.ts); the shipped default is
 * under 10 KiB, 100 rules and 200 terms. Role cues have their own (ROLE_CUE_LIMITS) and count towards
 * `terms`.
 */
export const RULE_FILE_LIMITS = {
  fileBytes: 2 * 1024 * 1024,
  terms: 20_000,
  termLength: 200,
  patterns: 500,
  rules: 2_000,
  categories: 500,
  rulesPerCategory: 100,
  questions: 200,
  classifierModels: 3,
} as const;

/** A phrase to look for: matched literally after normalizing (activities/insights/text-match.ts). */
const term = z.string().min(1).max(RULE_FILE_LIMITS.termLength);

const seconds = z.number().nonnegative();
const name = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits, _ . - (a search attribute value)');

// --- metrics -------------------------------------------------------------------------------------------

const holdSettingsSchema = z
  .object({
    startPhrases: z
      .array(term)
      .min(1)
      .describe('an utterance holding one of these puts the call on hold (保留, 少々お待ち…)'),
    returnPhrases: z
      .array(term)
      .min(1)
      .describe('the same speaker saying one of these ends the hold (お待たせいたしました…)'),
    minSeconds: seconds.default(3).describe('a shorter wait is a pause, not a hold'),
    maxSeconds: seconds.default(1800).describe('a longer gap is not one hold'),
  })
  .meta({ id: 'HoldSettings' });

const metricsSettingsSchema = z
  .object({
    silenceSeconds: z
      .number()
      .positive()
      .default(3)
      .describe('a gap in which nobody talks counts as a silence from this length'),
    overlapSeconds: z
      .number()
      .positive()
      .default(1)
      .describe('two speakers talking at once count as an overlap from this length'),
    hold: holdSettingsSchema.optional().describe('hold phrases; no holds are detected without them'),
  })
  .meta({ id: 'MetricsSettings' });
export type MetricsSettings = z.output<typeof metricsSettingsSchema>;

// --- rules ---------------------------------------------------------------------------------------------

/** Part of the call a rule looks at; events and utterances count when they start inside it. */
const timeWindowSchema = z
  .union([
    z.object({ first: z.number().positive().describe('the first N seconds of the call') }).strict(),
    z.object({ last: z.number().positive().describe('the last N seconds of the call') }).strict(),
    z
      .object({
        fromPercent: z.number().min(0).max(100).default(0),
        toPercent: z.number().min(0).max(100).default(100),
      })
      .strict()
      .refine((w) => w.fromPercent < w.toPercent, 'fromPercent must be below toPercent'),
  ])
  .meta({ id: 'TimeWindow' });
export type TimeWindow = z.output<typeof timeWindowSchema>;

const ruleBase = {
  speaker: z
    .string()
    .min(1)
    .optional()
    .describe(
      'only this speaker (agent, customer); ignored on a one-track (mono or mixed) call, where nobody can be told apart',
    ),
  window: timeWindowSchema.optional(),
  negate: z.boolean().default(false).describe('the rule holds when its test does not'),
  minCount: z.number().int().positive().default(1).describe('points needed for the test to hold'),
};

const phraseRuleSchema = z
  .object({
    kind: z.literal('phrase'),
    terms: z.array(term).default([]),
    patterns: z
      .array(userPatternSchema)
      .default([])
      .describe(
        'regular expressions (RE2 syntax, linear time) matched against the normalized text: width and kana folded (katakana in a pattern too), case ignored, no spaces or punctuation',
      ),
    match: z
      .enum(['any', 'all'])
      .default('any')
      .describe('an utterance counts when it holds any (or all) of the terms and patterns'),
    ...ruleBase,
  })
  .strict()
  .refine((r) => r.terms.length + r.patterns.length > 0, {
    message: 'a phrase rule needs terms or patterns',
    path: ['terms'],
  });

const sentimentRuleSchema = z
  .object({
    kind: z.literal('sentiment'),
    label: z.enum(['Positive', 'Negative', 'Neutral']).optional(),
    below: z
      .number()
      .min(-1)
      .max(1)
      .optional()
      .describe('signed value (result.json sentiment.scoring) under this'),
    above: z.number().min(-1).max(1).optional(),
    emotions: z
      .array(z.enum(SENTIMENT_EMOTIONS))
      .min(1)
      .optional()
      .describe(
        "an utterance counts when one of its emotional phrases carries one of these labels (spec 01's: 怒る, 嫌, 不安…); utterance scope only",
      ),
    scope: z
      .enum(['utterance', 'call'])
      .default('utterance')
      .describe('utterance: each analysed utterance is tested; call: the mean over the window'),
    ...ruleBase,
  })
  .strict()
  .refine(
    (r) =>
      r.label !== undefined || r.below !== undefined || r.above !== undefined || r.emotions !== undefined,
    'a sentiment rule needs label, below, above or emotions',
  )
  .refine((r) => r.emotions === undefined || r.scope === 'utterance', {
    message: 'emotions are per utterance: scope call cannot use them',
    path: ['emotions'],
  });

const silenceRuleSchema = z
  .object({
    kind: z.literal('silence'),
    minSeconds: z.number().positive().optional().describe('default: metrics.silenceSeconds'),
    includeHolds: z.boolean().default(false).describe('count silences inside a hold (reported as holds)'),
    ...ruleBase,
  })
  .strict()
  .describe('speaker: the one who talked last before the silence (the one left waiting)');

const overlapRuleSchema = z
  .object({
    kind: z.literal('overlap'),
    minSeconds: z.number().positive().optional().describe('default: metrics.overlapSeconds'),
    ...ruleBase,
  })
  .strict()
  .describe('speaker: the one who started talking over the other');

const holdRuleSchema = z
  .object({
    kind: z.literal('hold'),
    minSeconds: seconds.optional(),
    maxSeconds: seconds.optional(),
    ...ruleBase,
  })
  .strict();

const CALL_METRICS = [
  'durationSeconds',
  'talkShare',
  'talkToListen',
  'speechRate',
  'fillersPerMinute',
  'longestMonologueSeconds',
  'timeToFirstAgentSeconds',
  'silenceSeconds',
  'overlapSeconds',
  'holdSeconds',
] as const;

const metricRuleSchema = z
  .object({
    kind: z.literal('metric'),
    metric: z
      .enum(CALL_METRICS)
      .describe(
        'per speaker when `speaker` is given (talkShare, talkToListen, speechRate, fillersPerMinute, longestMonologueSeconds)',
      ),
    above: z.number().optional(),
    below: z.number().optional(),
    speaker: ruleBase.speaker,
    window: timeWindowSchema
      .optional()
      .describe(
        'the metric over the utterances that start inside this part of the call, its times from the part’s start',
      ),
    negate: ruleBase.negate,
  })
  .strict()
  .describe('one value per call (or speaker, or window): no minCount')
  .refine((r) => r.above !== undefined || r.below !== undefined, 'a metric rule needs above or below');

const dialogActRuleSchema = z
  .object({
    kind: z.literal('dialogAct'),
    acts: z.array(z.enum(DIALOG_ACTS)).min(1),
    match: z.enum(['any', 'all']).default('any'),
    ...ruleBase,
  })
  .strict();

const redactionRuleSchema = z
  .object({
    kind: z.literal('redaction'),
    types: z
      .array(z.string().min(1))
      .optional()
      .describe('kinds of personal data (as the redaction records name them); default any'),
    ...ruleBase,
  })
  .strict();

const categoryRefRuleSchema = z
  .object({
    kind: z.literal('category'),
    category: name.describe('a category defined earlier in the file'),
    negate: ruleBase.negate,
  })
  .strict();

export const reasonRuleSchema = z
  .object({
    kind: z.literal('reason'),
    classes: z
      .array(name)
      .min(1)
      .describe("the call's reason (its best class by the configured model) is one of these"),
    minScore: z.number().min(0).max(1).default(0).describe('and its score is at least this'),
    negate: ruleBase.negate,
  })
  .strict();

/** A model id as the service gives it (`callpipe reasons list`): it names a stored record too. */
export const MODEL_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Each line of one speaker classified by a text classification model (spec 03) trained on labelled
 * lines (`callpipe reasons train lines.csv`): the rule counts the lines whose score for `class` is above
 * `above`. The pipeline sends one request per line of that speaker and model (activities/nlp/line-classes.ts).
 */
const classifierRuleSchema = z
  .object({
    kind: z.literal('classifier'),
    model: z
      .string()
      .regex(MODEL_ID_PATTERN, 'a model id as `callpipe reasons list` shows it (letters, digits, _ -)')
      .describe('the text classification model, trained on labelled lines (class,text)'),
    class: z
      .string()
      .min(1)
      .max(TRAINING_LIMITS.classChars)
      .describe("one of the model's classes (the training file's first column)"),
    above: z
      .number()
      .min(0)
      .lt(1, 'must be below 1: no score is above 1')
      .default(0.5)
      .describe('a line counts when its score for the class is above this'),
    ...ruleBase,
    speaker: z
      .string({ error: 'a classifier rule needs speaker (agent, customer): the lines it classifies' })
      .min(1)
      .describe('whose lines are classified (agent, customer): one request per line of this speaker'),
  })
  .strict();

const ruleSchema = z
  .discriminatedUnion('kind', [
    phraseRuleSchema,
    sentimentRuleSchema,
    silenceRuleSchema,
    overlapRuleSchema,
    holdRuleSchema,
    metricRuleSchema,
    dialogActRuleSchema,
    redactionRuleSchema,
    categoryRefRuleSchema,
    reasonRuleSchema,
    classifierRuleSchema,
  ])
  .meta({ id: 'Rule' });
export type Rule = z.output<typeof ruleSchema>;

/** How urgent an alert is: the order receivers and Slack messages rank alerts by. */
export const ALERT_SEVERITIES = ['info', 'warning', 'critical'] as const;

const alertSchema = z
  .object({
    severity: z.enum(ALERT_SEVERITIES).describe('info, warning or critical'),
  })
  .strict()
  .meta({ id: 'Alert' });

const categorySchema = z
  .object({
    name,
    description: z.string().optional(),
    match: z.enum(['all', 'any']).default('all').describe('every rule must hold, or any one'),
    rules: z.array(ruleSchema).min(1).max(RULE_FILE_LIMITS.rulesPerCategory),
    alert: alertSchema
      .optional()
      .describe(
        'a call that matches raises a `callpipe.call.alert` event as soon as its insights exist (docs/events.md)',
      ),
  })
  .strict()
  .meta({ id: 'Category' });
export type Category = z.output<typeof categorySchema>;

// --- scorecard -----------------------------------------------------------------------------------------

/** What answers a question: a category (matched = yes) or a rule of its own. */
const answerSchema = z.union([
  z.object({ category: name }).strict(),
  z.object({ rule: ruleSchema }).strict(),
]);

const questionSchema = z
  .object({
    id: name,
    text: z.string().min(1).describe('the question as a supervisor reads it'),
    weight: z.number().positive().default(1),
    answer: answerSchema.describe('yes when the category matched (or the rule held)'),
    applicableWhen: answerSchema
      .optional()
      .describe('not applicable (left out of the maximum) unless this holds'),
  })
  .strict()
  .meta({ id: 'Question' });
export type Question = z.output<typeof questionSchema>;

const scorecardSchema = z
  .object({
    name: z.string().min(1),
    questions: z.array(questionSchema).min(1).max(RULE_FILE_LIMITS.questions),
  })
  .strict()
  .meta({ id: 'Scorecard' });

// --- the file ------------------------------------------------------------------------------------------

/** Every rule of the file: the categories' and the scorecard questions'. */
function allRules(file: {
  categories: { rules: Rule[] }[];
  scorecard?: { questions: Question[] } | undefined;
}): Rule[] {
  const answers = (file.scorecard?.questions ?? []).flatMap((q) => [q.answer, q.applicableWhen]);
  return [
    ...file.categories.flatMap((c) => c.rules),
    ...answers.flatMap((a) => (a && 'rule' in a ? [a.rule] : [])),
  ];
}

/**
 * Every phrase the file asks to look for (hold phrases, phrase rules, role cues and company names) and
 * every rule it tests (of categories and questions).
 */
function sizeOf(file: {
  metrics: { hold?: { startPhrases: string[]; returnPhrases: string[] } | undefined };
  categories: { rules: Rule[] }[];
  scorecard?: { questions: Question[] } | undefined;
  roles?: { companyNames: string[]; cues: { terms: string[] }[] } | undefined;
}): { terms: number; rules: number; patterns: number } {
  let terms = (file.metrics.hold?.startPhrases.length ?? 0) + (file.metrics.hold?.returnPhrases.length ?? 0);
  let patterns = 0;
  const rules = allRules(file);
  for (const r of rules) {
    terms += r.kind === 'phrase' ? r.terms.length : 0;
    patterns += r.kind === 'phrase' ? r.patterns.length : 0;
  }
  terms += file.roles?.companyNames.length ?? 0;
  for (const cue of file.roles?.cues ?? []) terms += cue.terms.length;
  return { terms, rules: rules.length, patterns };
}

/** A model and whose lines it classifies: the line classification a rule file asks for. */
export const lineClassifierSchema = z.object({
  model: z.string().regex(MODEL_ID_PATTERN),
  speaker: z.string().min(1),
});
export type LineClassifier = z.infer<typeof lineClassifierSchema>;

/**
 * The (model, speaker) pairs of the file's classifier rules, each once: the pipeline classifies each line
 * of each pair's speaker once with its model, however many rules read the scores.
 */
export function lineClassifiers(file: Parameters<typeof allRules>[0]): LineClassifier[] {
  const pairs = new Map<string, LineClassifier>();
  for (const r of allRules(file))
    if (r.kind === 'classifier')
      pairs.set(`${r.model}\n${r.speaker}`, { model: r.model, speaker: r.speaker });
  return [...pairs.values()];
}

export const rulesFileSchema = z
  .object({
    format: z.literal(RULES_FORMAT_VERSION, {
      // The one field a new file lacks most often: say what to write, not zod's "expected 1".
      error: (issue) =>
        issue.input === undefined
          ? `missing: a rule file starts with "format: ${RULES_FORMAT_VERSION}" (the rule file format this callpipe reads)`
          : `must be ${RULES_FORMAT_VERSION}, the rule file format this callpipe reads (docs/insights.md)`,
    }),
    name: z.string().min(1),
    version: z.string().min(1).describe("the author's version, recorded with every result scored"),
    description: z.string().optional(),
    metrics: metricsSettingsSchema.default({ silenceSeconds: 3, overlapSeconds: 1 }),
    categories: z.array(categorySchema).max(RULE_FILE_LIMITS.categories).default([]),
    scorecard: scorecardSchema.optional(),
    roles: roleSettingsSchema
      .optional()
      .describe(
        'cues that tell the agent from the customer (schemas/speakers.ts); absent: the shipped default file’s',
      ),
    reasons: z
      .object({
        model: z
          .string()
          .min(1)
          .describe('the text classification model calls are classified with (CALLPIPE_REASONS_MODEL wins)'),
      })
      .strict()
      .optional()
      .describe('call reasons (docs/insights.md, "Call reasons")'),
  })
  .strict()
  .superRefine((file, ctx) => {
    const { terms, rules, patterns } = sizeOf(file);
    if (patterns > RULE_FILE_LIMITS.patterns)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `${patterns} patterns in all, at most ${RULE_FILE_LIMITS.patterns}`,
      });
    if (terms > RULE_FILE_LIMITS.terms)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `${terms} terms and phrases in all, at most ${RULE_FILE_LIMITS.terms}`,
      });
    if (rules > RULE_FILE_LIMITS.rules)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `${rules} rules in all (categories and questions), at most ${RULE_FILE_LIMITS.rules}`,
      });
    const classifiers = lineClassifiers(file).length;
    if (classifiers > RULE_FILE_LIMITS.classifierModels)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `${classifiers} (model, speaker) pairs of classifier rules, at most ${RULE_FILE_LIMITS.classifierModels}: each costs one request per line of its speaker`,
      });
    const seen = new Set<string>();
    const refs = (rule: Rule, path: (string | number)[]) => {
      if (rule.kind === 'category' && !seen.has(rule.category))
        ctx.addIssue({ code: 'custom', path, message: `category ${rule.category} is not defined before it` });
    };
    file.categories.forEach((c, i) => {
      if (seen.has(c.name))
        ctx.addIssue({
          code: 'custom',
          path: ['categories', i, 'name'],
          message: `${c.name} is defined twice`,
        });
      c.rules.forEach((r, j) => refs(r, ['categories', i, 'rules', j]));
      seen.add(c.name);
    });
    const ids = new Set<string>();
    file.scorecard?.questions.forEach((q, i) => {
      if (ids.has(q.id))
        ctx.addIssue({ code: 'custom', path: ['scorecard', 'questions', i, 'id'], message: `${q.id} twice` });
      ids.add(q.id);
      for (const [field, a] of [
        ['answer', q.answer],
        ['applicableWhen', q.applicableWhen],
      ] as const) {
        if (!a) continue;
        const path = ['scorecard', 'questions', i, field];
        if ('category' in a && !seen.has(a.category))
          ctx.addIssue({ code: 'custom', path, message: `no category ${a.category}` });
        if ('rule' in a) refs(a.rule, path);
      }
    });
  })
  .meta({
    id: 'CallpipeRules',
    title: 'callpipe rule file',
    description: 'Call metrics thresholds, categories and a scorecard of call insights.',
  });
export type RulesFile = z.output<typeof rulesFileSchema>;
