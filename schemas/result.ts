/**
 * The output documents of a call (docs/design.md, Output): `result.json`, written last under
 * `<out>/<callId>/` so its presence means the call is done, and `error.json`, written instead when the
 * call failed. The JSON Schema published beside this file (`result.schema.json`) is generated from
 * these schemas by `node scripts/on-node.mjs ts schemas/generate-json-schema.ts`; a unit test fails when it is stale.
 *
 * The outputs of the text steps (fillers, sentiment, summary, keywords) are defined here too: each step
 * writes its part to staging storage, and `publishResult` embeds them, so the part a step wrote and the
 * part a reader finds in result.json are the same shape.
 *
 * Glossary: *utterance* — one final recognition result on the recording's clock (seconds from its
 * start); *speaker* — the label of the channel it was heard on; *session* — one stream recognition of
 * at most 3,000 s of one track; *restart* — a session resumed from a new start request after an error;
 * *step* — one text analysis over the whole call.
 *
 * Versioning: `schemaVersion` changes only on an incompatible change (a field removed, renamed or
 * retyped); new optional fields keep it.
 */
import { z } from 'zod';
import { recognitionFactsSchema, SESSION_RECOGNITIONS } from './recognition.ts';
import { speakerRolesSchema } from './speakers.ts';
import { amrFramesSchema, inputReaderSchema, lengthCheckSchema } from './media-probe.ts';
import { channelFactsSchema, cutKindSchema, silenceSchema } from './plan.ts';
import { STAGES } from './recording.ts';
import { TEXT_GRAINS } from './text-grains.ts';
import { callReasonsSchema } from './reasons.ts';
import { lineClassifierSchema } from './rules.ts';
import {
  misrecognitionSchema,
  qualitySettingsSchema,
  transcriptQualitySchema,
} from './transcript-quality.ts';
import { REDACTION_SOURCES, redactionRecordSchema, stagedRedactionSchema } from './redaction.ts';

/** 2 (0.2.0): one name per concept (`reStreamedSeconds`, `writtenAt`, a keyword's `text`); see CHANGELOG.md. */
export const RESULT_SCHEMA_VERSION = 2;

const seconds = z.number().nonnegative();
const count = z.number().int().nonnegative();

// --- shared pieces -------------------------------------------------------------------------------------

/** The text steps, in the order the workflow runs them. */
export type NlpStep =
  | 'redaction'
  | 'fillers'
  | 'summary'
  | 'sentiment'
  | 'keywords'
  | 'dialogActs'
  | 'reasons'
  | 'quality'
  | 'lineClasses';
/** Steps whose failure leaves the call `partial`: the text steps after redaction, and the redacted audio copy. */
const PARTIAL_STEPS = [
  'fillers',
  'summary',
  'sentiment',
  'keywords',
  'dialogActs',
  'reasons',
  'quality',
  'lineClasses',
  'audioRedaction',
] as const;

/** What the service calls of one step or endpoint cost (service/cost.ts, CallCost). */
export const requestCostSchema = z
  .object({
    requests: count.describe('HTTP requests sent, token requests included'),
    retries: count.describe(
      'requests that repeated an earlier one (in the activity and across its attempts)',
    ),
    bytesSent: count,
    bytesReceived: count,
  })
  .meta({ id: 'RequestCost' });

/** A text step that did not produce its part: the call is still done, without that part. */
const stepFailureSchema = z
  .object({
    step: z.enum(PARTIAL_STEPS),
    reason: z.string().min(1).describe('why, in words a user can act on'),
  })
  .meta({ id: 'StepFailure' });

// --- step outputs (staging) ----------------------------------------------------------------------------

/** A filler the service removed; offsets are into the utterance's `normalizedText` (spec 01: positions within `normalized_sentence`). */
const fillerSchema = z
  .object({
    text: z.string().describe('the filler as the service reported it (its `form`), e.g. `えーっと、`'),
    begin: count.describe('zero-based start, in UTF-16 code units of normalizedText'),
    end: count.describe('exclusive end, in UTF-16 code units of normalizedText'),
  })
  .meta({ id: 'Filler' });
export type Filler = z.infer<typeof fillerSchema>;

const utteranceFillersSchema = z.object({
  index: count,
  /** The text after the service normalized lengthened or disrupted expressions (`normalized_sentence`s joined). */
  normalizedText: z.string(),
  /** `normalizedText` without its fillers (`fixed_sentence`s joined), leading pause marks trimmed. */
  cleanedText: z.string(),
  fillers: z.array(fillerSchema),
});
export type UtteranceFillers = z.infer<typeof utteranceFillersSchema>;

export const fillersOutputSchema = z.object({
  step: z.literal('fillers'),
  callId: z.string().min(1),
  utterances: z.array(utteranceFillersSchema),
  /** Requests of the batched form (several utterances each) and per-utterance fallbacks. */
  batches: count,
  fallbacks: count,
  cost: requestCostSchema,
});
export type FillersOutput = z.infer<typeof fillersOutputSchema>;

const SENTIMENT_LABELS = ['Positive', 'Negative', 'Neutral'] as const;
const sentimentLabelSchema = z.enum(SENTIMENT_LABELS);

/**
 * How `value` is defined (spec 01 gives a label and a float `score` per sentence, 0–1 in the samples):
 * Positive → +score, Negative → −score, Neutral → 0, clamped to [−1, 1]. An aggregate's `meanValue` is
 * the plain mean over its analysed utterances (each utterance counts once, however long), and its label
 * is Positive above +{@link SENTIMENT_NEUTRAL_BAND}, Negative below −{@link SENTIMENT_NEUTRAL_BAND},
 * Neutral between.
 */
export const SENTIMENT_SCORING =
  'value = +score for Positive, -score for Negative, 0 for Neutral, clamped to [-1, 1]; ' +
  'meanValue = mean of value over analysed utterances; label = Positive if meanValue > 0.1, ' +
  'Negative if meanValue < -0.1, else Neutral';
export const SENTIMENT_NEUTRAL_BAND = 0.1;

const utteranceSentimentSchema = z
  .object({
    label: sentimentLabelSchema,
    score: z.number().describe("the service's score of the label"),
    value: z.number().min(-1).max(1).describe('signed score: see sentiment.scoring'),
    emotions: z
      .array(z.object({ form: z.string(), labels: z.array(z.string()) }))
      .describe('emotional phrases and their labels (喜ぶ, 不安, P, N, …)'),
  })
  .meta({ id: 'UtteranceSentiment' });
export type UtteranceSentiment = z.infer<typeof utteranceSentimentSchema>;

const sentimentAggregateSchema = z
  .object({
    utterances: count.describe('utterances analysed'),
    positive: count,
    negative: count,
    neutral: count,
    meanValue: z.number().min(-1).max(1).nullable().describe('null when no utterance was analysed'),
    label: sentimentLabelSchema.nullable(),
  })
  .meta({ id: 'SentimentAggregate' });
export type SentimentAggregate = z.infer<typeof sentimentAggregateSchema>;

const sentimentQuarterSchema = z.object({
  quarter: z.number().int().min(1).max(4),
  /** The quarter's time span (seconds); an utterance belongs to the quarter holding its midpoint. */
  start: seconds,
  end: seconds,
  overall: sentimentAggregateSchema,
  bySpeaker: z.record(z.string(), sentimentAggregateSchema),
});
export type SentimentQuarter = z.infer<typeof sentimentQuarterSchema>;

/** The call-level part of sentiment (result.json's `sentiment`). */
const sentimentSummarySchema = z.object({
  scoring: z.string(),
  grain: z
    .enum(TEXT_GRAINS)
    .optional()
    .describe(
      'what one request analysed: an utterance, or a turn or window whose sentiment each of its utterances carries',
    ),
  windowSeconds: z
    .number()
    .positive()
    .optional()
    .describe('length of a window, and the longest turn (grain turn or window); 30 when absent'),
  overall: sentimentAggregateSchema,
  bySpeaker: z.record(z.string(), sentimentAggregateSchema),
  byQuarter: z.array(sentimentQuarterSchema).length(4),
});
export type SentimentSummary = z.infer<typeof sentimentSummarySchema>;

export const sentimentOutputSchema = sentimentSummarySchema.extend({
  step: z.literal('sentiment'),
  callId: z.string().min(1),
  /** One entry per utterance of the timeline; `sentiment` null when it had no text to analyse. */
  utterances: z.array(z.object({ index: count, sentiment: utteranceSentimentSchema.nullable() })),
  cost: requestCostSchema,
});
export type SentimentOutput = z.infer<typeof sentimentOutputSchema>;

/** The call-level part of dialog acts (result.json's `dialogActs`): what one request classified. */
const dialogActsSummarySchema = z
  .object({
    grain: z
      .enum(TEXT_GRAINS)
      .describe('an utterance, or a turn or window whose speech acts each of its utterances carries'),
    windowSeconds: z
      .number()
      .positive()
      .optional()
      .describe('length of a window, and the longest turn (grain turn or window)'),
    units: count.describe(
      'units with text classified; one request per distinct text (processing.requests.dialogActs)',
    ),
  })
  .meta({ id: 'DialogActsSummary' });

export const dialogActsOutputSchema = dialogActsSummarySchema.extend({
  step: z.literal('dialogActs'),
  callId: z.string().min(1),
  /** One entry per utterance of the timeline: the speech acts of its unit; null when it had no text. */
  utterances: z.array(z.object({ index: count, dialogActs: z.array(z.string()).nullable() })),
  cost: requestCostSchema,
});
export type DialogActsOutput = z.infer<typeof dialogActsOutputSchema>;

const summarySchema = z
  .object({
    text: z.string().describe('the summary; empty when the call had no text'),
    mode: z.enum(['extract', 'extract-cc']),
    levels: count.describe('0: the dialog was its own summary; 1: one request; more: summaries of summaries'),
    windows: count.describe('summary requests made'),
    documentChars: count.describe('characters of the dialog summarized'),
  })
  .meta({ id: 'Summary' });

export const summaryOutputSchema = summarySchema.extend({
  step: z.literal('summary'),
  callId: z.string().min(1),
  cost: requestCostSchema,
});
export type SummaryOutput = z.infer<typeof summaryOutputSchema>;

const keywordSchema = z
  .object({
    text: z.string().describe('the keyword as the service reported it (its `form`)'),
    score: z.number().describe("the service's importance score; keywords come highest first"),
  })
  .meta({ id: 'Keyword' });

export const keywordsOutputSchema = z.object({
  step: z.literal('keywords'),
  callId: z.string().min(1),
  maxKeywords: z.number().int().positive(),
  keywords: z.array(keywordSchema),
  cost: requestCostSchema,
});
export type KeywordsOutput = z.infer<typeof keywordsOutputSchema>;

/**
 * What the redaction step staged besides the redacted timeline: per utterance that held personal data,
 * its redactions (kind, the mask's place, and where the value was in the recognized text, which the
 * unredacted copy needs) and its time range (for the redacted audio). Never a value.
 */
export const redactionOutputSchema = z.object({
  step: z.literal('redaction'),
  callId: z.string().min(1),
  /** The redacted timeline the later steps read (the recognized one stays beside it, for the unredacted copy). */
  timelineKey: z.string().min(1),
  utterances: z.array(
    z.object({
      index: count,
      track: count,
      speaker: z.string().min(1),
      start: seconds,
      end: seconds,
      redactions: z.array(stagedRedactionSchema).min(1),
    }),
  ),
  counts: z.record(z.string(), count),
  /** Named-entity requests (windows of whole turns). */
  windows: count,
  detectors: z.array(z.enum(REDACTION_SOURCES)),
  cost: requestCostSchema,
});
export type RedactionOutput = z.infer<typeof redactionOutputSchema>;

// --- facts the workflow gathers --------------------------------------------------------------------

const sourceFactsSchema = z
  .object({
    uri: z.string().min(1).describe('where the recording was read: s3://bucket/key'),
    bucket: z.string().min(1),
    key: z.string().min(1),
    etag: z.string().optional(),
    sizeBytes: count.optional().describe("the object's size when it was listed or uploaded"),
    lastModified: z.iso
      .datetime({ offset: true })
      .optional()
      .describe(
        "the object's last-modified time when the result was written (the call's time without a manifest)",
      ),
    fingerprint: z
      .string()
      .optional()
      .describe('content fingerprint, e.g. sha256:<hex>; absent in error.json when the probe did not run'),
    metadata: z
      .record(z.string(), z.string())
      .optional()
      .describe('manifest columns given with the recording (personal columns masked, as text is)'),
    personalValues: z
      .array(
        z.object({
          column: z
            .string()
            .min(1)
            .optional()
            .describe('the manifest column; absent for a value of the recording’s key'),
          kind: z.string().min(1),
          digest: z.string().regex(/^[0-9a-f]{64}$/),
          origin: z
            .enum(['manifest', 'source'])
            .optional()
            .describe('`source`: a number or address in the recording’s key; absent: a manifest column'),
        }),
      )
      .optional()
      .describe(
        'keyed digests of the personal manifest columns and of the personal values in the recording’s ' +
          'key (for `callpipe find`), never the values; absent when no digest key is configured',
      ),
  })
  .meta({ id: 'SourceFacts' });
export type SourceFacts = z.infer<typeof sourceFactsSchema>;

const audioFactsSchema = z
  .object({
    durationSeconds: seconds.describe('decoded length of the recording'),
    container: z.string().describe("ffprobe's container name, e.g. wav, mp3, ogg"),
    codec: z.string().describe('codec of the audio track, e.g. pcm_s16le, pcm_mulaw, mp3'),
    sampleRate: z.number().int().positive(),
    channels: z.number().int().positive(),
    sizeBytes: count.describe('bytes of the recording as probed'),
    hasVideo: z.boolean(),
    tracks: z
      .array(
        z.object({
          track: count,
          speaker: z.string().min(1),
          sourceChannels: z.array(count).min(1),
        }),
      )
      .describe('which source channels each speaker was heard on'),
    reader: inputReaderSchema
      .optional()
      .describe(
        'how ffmpeg read the file: format null = by its content; a demuxer (g722, mulaw…) = a headerless ' +
          'format named by its extension; repair amr = AMR comfort-noise/no-data frames decoded as silence',
      ),
    lengthCheck: lengthCheckSchema
      .optional()
      .describe("the decoded length checked against the container's own timeline (frames or packets)"),
    amr: amrFramesSchema.optional().describe('AMR recordings: their 20-ms frames by type'),
    channelAnalysis: z
      .object({
        channels: z
          .array(channelFactsSchema.meta({ id: 'ChannelFacts' }))
          .describe(
            'per source channel, after DC and hum removal: levels, noise floor, silence threshold, status',
          ),
        decisions: z
          .array(z.string())
          .describe(
            'what was decided from it: duplicated channels recognized once, silent channels left out',
          ),
      })
      .optional(),
  })
  .meta({ id: 'AudioFacts' });
export type AudioFacts = z.infer<typeof audioFactsSchema>;

const sessionFactsSchema = z
  .object({
    index: count,
    track: count,
    speaker: z.string().min(1),
    start: seconds.describe('absolute start of the session, seconds'),
    end: seconds,
    cut: cutKindSchema.describe('how the end was chosen: in a silence, hard at the limit, or at the end'),
    silence: silenceSchema.nullable().describe('the silence the cut was placed in'),
    restarts: count.describe('new start requests after a recognition error'),
    reStreamedSeconds: seconds.describe('audio sent again because of restarts'),
    restartReasons: z
      .array(z.string())
      .describe('why each restart happened, in order (the error that ended the stream before it)'),
    audioSecondsSent: seconds.describe('audio sent by this run, restarts included (0 when reused)'),
    reused: z.boolean().describe('its result was found staged by an earlier attempt and reused'),
    utterances: count.describe("the session's utterances in the timeline"),
    recognition: z
      .enum(SESSION_RECOGNITIONS)
      .optional()
      .describe(
        'file: a piece of at most 58 s recognized by one file request; stream (or absent): a stream session',
      ),
  })
  .meta({ id: 'SessionFacts' });
export type SessionFacts = z.infer<typeof sessionFactsSchema>;

/** Requests of one endpoint as the result reports them; bytes when they were measured. */
const endpointCostSchema = z
  .object({
    requests: count,
    retries: count,
    bytesSent: count.optional(),
    bytesReceived: count.optional(),
  })
  .meta({ id: 'EndpointCost' });
export type EndpointCost = z.infer<typeof endpointCostSchema>;

const processingFactsSchema = z
  .object({
    workflowId: z.string().min(1),
    runId: z.string().min(1),
    startedAt: z.iso
      .datetime()
      .describe('when the workflow started the call; it ended at the top-level writtenAt'),
    batchId: z.string().optional().describe('the backfill or nightly batch the call was part of'),
    requests: z
      .record(z.string(), endpointCostSchema)
      .describe(
        'per endpoint: fillers (/nlp/beta/remove_filler), summary (/nlp/v1/summary), sentiment ' +
          '(/nlp/v1/sentiment), keywords (/nlp/v1/keyword), dialogActs (/nlp/v1/sentence_type), ' +
          'recognition (/asr/v1/...), token requests included',
      ),
    totalRequests: count,
    retries: count.describe('sum of retries over every endpoint'),
    restarts: count.describe('recognition restarts over every session'),
    reStreamedSeconds: seconds.describe('audio sent again because of restarts, over every session'),
    wallSeconds: z
      .record(z.string(), seconds)
      .describe('wall time per stage, seconds, and `total` from the start until the write'),
  })
  .meta({ id: 'ProcessingFacts' });
export type ProcessingFacts = z.infer<typeof processingFactsSchema>;

// --- result.json -------------------------------------------------------------------------------------

/** Each class's score of one line, per model id (result.json's `utterances[].lineClasses`). */
const lineClassesSchema = z.record(z.string(), z.record(z.string(), z.number().min(0).max(1)));
export type LineClasses = z.infer<typeof lineClassesSchema>;

const resultUtteranceSchema = z
  .object({
    index: count,
    speaker: z.string().min(1),
    track: count,
    session: count,
    start: seconds.describe('absolute start, seconds from the start of the recording'),
    end: seconds,
    text: z.string().describe('recognized text as the service returned it'),
    confidence: z.number().optional().describe('recognition confidence 0–1, when the service gave one'),
    speakerConfidence: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe('how sure `speaker` is (1 on a track of its own; the voice separation on a mono call)'),
    voice: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .optional()
      .describe('voice of a one-track call (0 = heard first); null where none could be told'),
    joined: z
      .boolean()
      .optional()
      .describe('two voices recognized as one utterance: `speaker` is the one holding most of it'),
    normalizedText: z.string().nullable().describe('null when filler removal did not run'),
    cleanedText: z.string().nullable().describe('text without fillers; null when filler removal did not run'),
    fillers: z.array(fillerSchema),
    sentiment: utteranceSentimentSchema.nullable(),
    redactions: z
      .array(redactionRecordSchema)
      .optional()
      .describe(
        'personal data masked in `text` (kind, where the mask is, which detector); in the unredacted copy, ' +
          'where the value is. Absent when redaction did not run (see `redaction`)',
      ),
    dialogActs: z
      .array(z.string())
      .nullable()
      .optional()
      .describe('speech acts (/nlp/v1/sentence_type) of the utterance or its turn; null when not analysed'),
    misrecognition: misrecognitionSchema
      .optional()
      .describe(
        'misrecognition detection of an utterance recognized with a low confidence; absent when not checked',
      ),
    lineClasses: lineClassesSchema
      .optional()
      .describe(
        "per model id, each class's score for this line (the rule file's classifier rules); absent when not classified",
      ),
  })
  .meta({ id: 'Utterance' });
export type ResultUtterance = z.infer<typeof resultUtteranceSchema>;

const speakerTalkSchema = z
  .object({
    speaker: z.string().min(1),
    utterances: count,
    talkSeconds: seconds.describe("time covered by the speaker's utterances (overlaps of its own merged)"),
    silenceSeconds: seconds.describe('duration of the call minus talkSeconds'),
    talkShare: z.number().min(0).max(1).describe('talkSeconds / duration of the call'),
  })
  .meta({ id: 'SpeakerTalk' });
export type SpeakerTalk = z.infer<typeof speakerTalkSchema>;

export const talkSchema = z.object({
  bySpeaker: z.array(speakerTalkSchema),
  silenceSeconds: seconds.describe('time when nobody talks'),
  overlapSeconds: seconds.describe('time when two or more speakers talk at once'),
});
export type Talk = z.infer<typeof talkSchema>;

// --- call insights (activities/insights/; rule file: schemas/rules.ts) ------------------------------

const nullableNumber = z.number().nullable();

const silenceEventSchema = z
  .object({
    start: seconds,
    end: seconds,
    seconds,
    hold: z.boolean().describe('the silence lies in a hold'),
  })
  .meta({ id: 'SilenceEvent' });

const overlapEventSchema = z
  .object({
    start: seconds,
    end: seconds,
    seconds,
    speakers: z.array(z.string()).describe('who talked at once'),
    interrupter: z.string().nullable().describe('who started talking while the other was talking'),
  })
  .meta({ id: 'OverlapEvent' });

const holdEventSchema = z
  .object({
    start: seconds.describe('end of the utterance that put the call on hold'),
    end: seconds.describe('start of the utterance that came back'),
    seconds,
    speaker: z.string(),
    startUtterance: count.describe('index of the hold phrase utterance'),
    returnUtterance: count.describe('index of the return phrase utterance'),
  })
  .meta({ id: 'HoldEvent' });

const speakerMetricsSchema = z
  .object({
    speaker: z.string().min(1),
    talkSeconds: seconds,
    talkToListen: nullableNumber.describe(
      "talkSeconds ÷ the other speakers' talk; null without another speaker",
    ),
    characters: count.describe('characters spoken (no spaces or punctuation)'),
    speechRate: nullableNumber.describe('characters per second of talk'),
    fillers: count
      .nullable()
      .describe('fillers counted before removal; null when filler removal did not run'),
    fillersPerMinute: nullableNumber.describe('fillers per minute of talk'),
    longestMonologueSeconds: seconds,
    interruptions: count.describe('overlaps this speaker started'),
  })
  .meta({ id: 'SpeakerMetrics' });

export const callMetricsSchema = z
  .object({
    settings: z.object({
      silenceSeconds: seconds,
      overlapSeconds: seconds,
      holdPhrases: z.boolean().describe('hold phrases were configured (else no holds are detected)'),
    }),
    durationSeconds: seconds,
    silences: z.array(silenceEventSchema).describe('gaps of at least settings.silenceSeconds between talk'),
    overlaps: z.array(overlapEventSchema).describe('cross-talk of at least settings.overlapSeconds'),
    holds: z.array(holdEventSchema),
    silenceSeconds: seconds.describe('sum of the silence events'),
    overlapSeconds: seconds.describe('sum of the overlap events'),
    holdSeconds: seconds.describe('sum of the holds'),
    longestMonologue: z
      .object({ speaker: z.string(), start: seconds, end: seconds, seconds })
      .nullable()
      .describe("one speaker's longest stretch, broken by another speaker or a silence"),
    timeToFirstAgentSeconds: nullableNumber.describe(
      "start of the agent's first utterance; null without an agent track",
    ),
    bySpeaker: z.array(speakerMetricsSchema),
  })
  .meta({ id: 'CallMetrics' });
export type CallMetrics = z.infer<typeof callMetricsSchema>;

/** Where a rule held: an utterance (its index), or an event (silence, overlap, hold) with `utterance` null. */
const insightPointSchema = z
  .object({ start: seconds, end: seconds, utterance: count.nullable() })
  .meta({ id: 'InsightPoint' });
export type InsightPoint = z.infer<typeof insightPointSchema>;

export const categoryResultSchema = z
  .object({
    name: z.string().min(1),
    matched: z.boolean(),
    points: z.array(insightPointSchema),
    unavailable: z
      .array(z.string())
      .optional()
      .describe('data a rule needed that the call lacks (e.g. sentiment when that step failed)'),
  })
  .meta({ id: 'CategoryResult' });
export type CategoryResult = z.infer<typeof categoryResultSchema>;

const scorecardAnswerSchema = z
  .object({
    id: z.string().min(1),
    text: z.string(),
    weight: z.number().positive(),
    answer: z.enum(['yes', 'no', 'na']),
    points: z.array(insightPointSchema),
    reason: z.string().optional().describe('why not applicable'),
  })
  .meta({ id: 'ScorecardAnswer' });

export const scorecardResultSchema = z
  .object({
    name: z.string().min(1),
    score: z.number().nonnegative().describe('sum of the weights answered yes'),
    max: z.number().nonnegative().describe('sum of the weights of applicable questions'),
    normalized: z.number().min(0).max(1).nullable().describe('score ÷ max; null when nothing applied'),
    unreliable: z
      .boolean()
      .optional()
      .describe('the transcript needs review (transcriptQuality): these automated answers are not facts'),
    answers: z.array(scorecardAnswerSchema),
  })
  .meta({ id: 'ScorecardResult' });
export type ScorecardResult = z.infer<typeof scorecardResultSchema>;

export const rulesFactsSchema = z
  .object({
    name: z.string().min(1),
    version: z.string().min(1),
    format: count,
    digest: z.string().describe('sha256:<hex> of the rule file as parsed'),
    scoredAt: z.iso.datetime(),
    rescoreBatchId: z.string().optional().describe('the rescore batch that wrote these insights, if any'),
  })
  .meta({ id: 'RulesFacts' });

/** The redacted copy of the recording's audio (opt-in), or why there is none. */
const audioRedactionSchema = z
  .discriminatedUnion('status', [
    z.object({ status: z.literal('off').describe('not asked for (CALLPIPE_REDACT_AUDIO)') }),
    z.object({
      status: z.literal('written'),
      key: z.string().min(1).describe('the redacted copy, beside result.json'),
      mask: z.enum(['tone', 'silence']),
      spans: count.describe('time ranges masked (on every channel)'),
      seconds: seconds.describe('audio masked in all'),
    }),
    z.object({
      status: z.literal('failed'),
      reason: z.string().min(1).describe('why no redacted audio was written (it never is unless verified)'),
    }),
  ])
  .meta({ id: 'AudioRedaction' });
export type AudioRedaction = z.infer<typeof audioRedactionSchema>;

const redactionSummarySchema = z
  .object({
    applied: z
      .boolean()
      .describe('true: the texts of this document are redacted; false: this is the unredacted copy'),
    detectors: z.array(z.enum(REDACTION_SOURCES)).describe('what looked: ne (named entities), pattern, term'),
    counts: z.record(z.string(), count).describe('redactions per kind'),
    total: count,
    unredactedCopy: z.boolean().describe('an unredacted copy was written under the configured prefix'),
    audio: audioRedactionSchema,
  })
  .meta({ id: 'RedactionSummary' });
export type RedactionSummary = z.infer<typeof redactionSummarySchema>;

/** The quality step's staged output: misrecognition detection of the low-confidence utterances. */
export const qualityOutputSchema = z.object({
  step: z.literal('quality'),
  callId: z.string().min(1),
  settings: qualitySettingsSchema,
  utterances: z.array(z.object({ index: count, misrecognition: misrecognitionSchema })),
  cost: requestCostSchema,
});
export type QualityOutput = z.infer<typeof qualityOutputSchema>;

/**
 * The line classification step's staged output: the lines of each (model, speaker) pair of the rule
 * file's classifier rules, scored by the model (schemas/rules.ts, lineClassifiers).
 */
export const lineClassesOutputSchema = z.object({
  step: z.literal('lineClasses'),
  callId: z.string().min(1),
  classifiers: z.array(lineClassifierSchema),
  utterances: z.array(z.object({ index: count, lineClasses: lineClassesSchema })),
  cost: requestCostSchema,
});
export type LineClassesOutput = z.infer<typeof lineClassesOutputSchema>;

/** The reasons step's staged output: the call classified by the configured model (schemas/reasons.ts). */
export const reasonsOutputSchema = z.object({
  step: z.literal('reasons'),
  callId: z.string().min(1),
  /** null: the call had no text to classify (nothing was sent). */
  reasons: callReasonsSchema.nullable(),
  cost: requestCostSchema,
});
export type ReasonsOutput = z.infer<typeof reasonsOutputSchema>;

export const resultDocumentSchema = z
  .object({
    schemaVersion: z.literal(RESULT_SCHEMA_VERSION),
    callId: z.string().min(1),
    source: sourceFactsSchema,
    audio: audioFactsSchema,
    speakers: z.array(z.string().min(1)),
    sessions: z.array(sessionFactsSchema),
    recognition: recognitionFactsSchema
      .optional()
      .describe(
        'how speech was recognized: the mode asked for (stream, file, auto), what the plan used and why; absent for runs from before the modes',
      ),
    utterances: z.array(resultUtteranceSchema),
    talk: talkSchema,
    sentiment: sentimentSummarySchema.nullable().describe('null when sentiment analysis did not run'),
    summary: summarySchema.nullable(),
    keywords: z.array(keywordSchema).nullable(),
    redaction: redactionSummarySchema
      .optional()
      .describe(
        'personal data redacted from every text above; absent for a run from before redaction existed',
      ),
    dialogActs: dialogActsSummarySchema
      .optional()
      .describe(
        'how speech acts were classified (utterances[].dialogActs); absent when the step did not run',
      ),
    speakerRoles: speakerRolesSchema
      .optional()
      .describe(
        'who each speaker is and why: roles with their evidence, a swapped channel map, voices told apart ' +
          'on a mono call; absent for a run from before the speakers stage',
      ),
    transcriptQuality: transcriptQualitySchema
      .optional()
      .describe('how far the transcript can be trusted; absent when the quality step did not run'),
    reasons: callReasonsSchema
      .optional()
      .describe(
        'why the customer called, by the configured text classification model; absent when none is configured or the step failed',
      ),
    metrics: callMetricsSchema.optional().describe('call metrics; absent in results written before 0.2.0'),
    categories: z
      .array(categoryResultSchema)
      .optional()
      .describe('categories of the rule file, in its order'),
    scorecard: scorecardResultSchema
      .nullable()
      .optional()
      .describe("the rule file's scorecard; null without one"),
    rules: rulesFactsSchema
      .optional()
      .describe('the rule file that produced metrics, categories and scorecard'),
    processing: processingFactsSchema,
    stepFailures: z.array(stepFailureSchema),
    writtenAt: z.iso.datetime(),
  })
  .meta({
    id: 'CallResult',
    title: 'callpipe result.json',
    description: 'Analytics of one call; its presence under <out>/<callId>/ means the call is done.',
  });
export type ResultDocument = z.infer<typeof resultDocumentSchema>;

// --- error.json --------------------------------------------------------------------------------------

export const errorDocumentSchema = z
  .object({
    schemaVersion: z.literal(RESULT_SCHEMA_VERSION),
    callId: z.string().min(1),
    source: sourceFactsSchema,
    stage: z.enum(STAGES).describe('the stage that failed: probe, plan, transcode, recognize, …'),
    reason: z.string().min(1).describe('why, in words a user can act on'),
    writtenAt: z.iso.datetime(),
    workflowId: z.string().optional(),
    runId: z.string().optional(),
  })
  .meta({
    id: 'CallError',
    title: 'callpipe error.json',
    description: 'Written instead of result.json when a call failed.',
  });
export type ErrorDocument = z.infer<typeof errorDocumentSchema>;
