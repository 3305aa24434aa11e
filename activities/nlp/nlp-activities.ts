/**
 * The text activities (task queue `callpipe-nlp`): redaction, filler removal, summary, sentiment,
 * keywords and dialog acts of one call. Each takes small JSON (keys, options), reads the call's Timeline (and the fillers output)
 * from staging storage, writes its output JSON (schemas/result.ts) to `outputKey`, and returns
 * `{ status, outputKey | reason, cost }`. Errors: failures.ts.
 *
 * Concurrency per process is the client's p-limit; the rate across workers is the task queue's rate
 * limit, set by the worker.
 */
import { classifyDialogActs } from './dialog-acts.ts';
import { extractKeywords } from './keywords.ts';
import { removeFillers } from './fillers.ts';
import { createPacer } from './pacing.ts';
import { classifyReasons } from './reasons.ts';
import { checkQuality, type CheckQualityInput } from './quality.ts';
import { classifyLines, type ClassifyLinesInput } from './line-classes.ts';
import { redactText } from './redact.ts';
import { compileRules } from './redaction/redact-call.ts';
import { analyzeSentiment } from './sentiment.ts';
import type { NlpActivityDeps } from './step.ts';
import { summarizeCall } from './summary.ts';
import type {
  AnalyzeSentimentInput,
  ClassifyDialogActsInput,
  ClassifyReasonsInput,
  ExtractKeywordsInput,
  NlpStepOutput,
  RedactTextInput,
  RemoveFillersInput,
  SummarizeCallInput,
} from './types.ts';

export function createNlpActivities(input: NlpActivityDeps) {
  // One pacer for every step of this process: the account's rate is shared by all of them.
  const deps: NlpActivityDeps = {
    ...input,
    pacer: input.pacer ?? createPacer(input.options?.requestsPerSecond),
  };
  // Compiled once per process: the deployment's patterns are checked when the configuration is loaded.
  const rules = compileRules(input.redactionRules, input.digestKey);
  return {
    /** Personal data masked in every utterance (redact.ts); writes the redacted timeline; output: RedactionOutput. */
    redactText: (input: RedactTextInput): Promise<NlpStepOutput> => redactText(deps, input, rules),
    /** Fillers out of every utterance, batched (fillers.ts); output: FillersOutput. */
    removeFillers: (input: RemoveFillersInput): Promise<NlpStepOutput> => removeFillers(deps, input),
    /** `extract-cc` summary of the dialog, hierarchical beyond 5,000 characters; output: SummaryOutput. */
    summarizeCall: (input: SummarizeCallInput): Promise<NlpStepOutput> => summarizeCall(deps, input),
    /** Sentiment per utterance, per speaker and per quarter; output: SentimentOutput. */
    analyzeSentiment: (input: AnalyzeSentimentInput): Promise<NlpStepOutput> => analyzeSentiment(deps, input),
    /** Keywords of the whole call; output: KeywordsOutput. */
    extractKeywords: (input: ExtractKeywordsInput): Promise<NlpStepOutput> => extractKeywords(deps, input),
    /** Speech acts (`/nlp/v1/sentence_type`) per utterance, turn or window; output: DialogActsOutput. */
    classifyDialogActs: (input: ClassifyDialogActsInput): Promise<NlpStepOutput> =>
      classifyDialogActs(deps, input),
    /** The call's reason by a text classification model (`/nlp/v1/classifier/models/<id>/classify`); output: ReasonsOutput. */
    classifyReasons: (input: ClassifyReasonsInput): Promise<NlpStepOutput> => classifyReasons(deps, input),
    /** Misrecognition detection of the low-confidence utterances (`/nlp/beta/detect_misrecognition`); output: QualityOutput. */
    checkQuality: (input: CheckQualityInput): Promise<NlpStepOutput> => checkQuality(deps, input),
    /** Each line of the rule file's classifier speakers scored by their models; output: LineClassesOutput. */
    classifyLines: (input: ClassifyLinesInput): Promise<NlpStepOutput> => classifyLines(deps, input),
  };
}

export type NlpActivities = ReturnType<typeof createNlpActivities>;
export type { NlpActivityDeps } from './step.ts';
export type * from './types.ts';
