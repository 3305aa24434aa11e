/**
 * Line classification (spec 03 text classification, for the rule file's classifier rules): each line of
 * a (model, speaker) pair's speaker classified by the model, one request per distinct line and model
 * (unit-requests.ts), so the cost is bounded by the speaker's lines times the file's models (at most
 * RULE_FILE_LIMITS.classifierModels).
 * The text is the redacted, cleaned one (what the steps after filler removal read). The one home of which
 * lines are sent and how: the pipeline's step (classifyLines) and `callpipe rescore` (resultLineClassifier,
 * from a stored result.json) both use linesToClassify and classifyLine.
 *
 * The step keeps its progress per utterance: a retried attempt sends only what is left. A model the
 * service does not know, or one not trained, fails the step alone: the call is then `partial` and its
 * classifier rules are unavailable.
 */
import {
  lineClassesOutputSchema,
  type LineClasses,
  type ResultDocument,
  type ResultUtterance,
} from '../../schemas/result.ts';
import type { LineClassifier } from '../../schemas/rules.ts';
import type { ServiceClient } from '../../service/index.ts';
import type { NlpCallOptions } from '../../service/nlp/call.ts';
import { readCallText } from './call-text.ts';
import { unpaced, type RequestPacer } from './pacing.ts';
import { runStep, type NlpActivityDeps } from './step.ts';
import { answerDistinct } from './unit-requests.ts';
import type { NlpStepInput, NlpStepOutput } from './types.ts';

export interface ClassifyLinesInput extends NlpStepInput {
  fillersKey?: string | undefined;
  /** The rule file's (model, speaker) pairs (schemas/rules.ts, lineClassifiers). */
  classifiers: LineClassifier[];
}

/** A line to classify: an utterance of a pair's speaker, its text, and the models it goes to. */
interface LineToClassify {
  index: number;
  text: string;
  models: string[];
}

/** The lines the pairs classify, in the order given: every non-empty line of a pair's speaker. */
function linesToClassify(
  utterances: readonly { index: number; speaker: string; text: string }[],
  classifiers: readonly LineClassifier[],
): LineToClassify[] {
  return utterances
    .filter((u) => u.text !== '')
    .map((u) => ({
      index: u.index,
      text: u.text,
      models: [...new Set(classifiers.filter((c) => c.speaker === u.speaker).map((c) => c.model))],
    }))
    .filter((l) => l.models.length > 0);
}

/** Sends one request (pacing, metering, retrying it as the caller does). */
type Send = <R>(call: (options: NlpCallOptions) => Promise<R>) => Promise<R>;

/** One line's scores, every class's, per model: one request per model. */
async function classifyLine(
  service: ServiceClient,
  line: Pick<LineToClassify, 'text' | 'models'>,
  send: Send,
): Promise<LineClasses> {
  const scores: LineClasses = {};
  for (const model of line.models) {
    const { result } = await send((o) => service.classifier.classify(model, line.text, o));
    scores[model] = Object.fromEntries(result.map((r) => [r.class, r.score]));
  }
  return scores;
}

export async function classifyLines(
  deps: NlpActivityDeps,
  input: ClassifyLinesInput,
): Promise<NlpStepOutput> {
  const { classifiers } = input;
  const inputs = JSON.stringify([input.timelineKey, input.fillersKey ?? null, classifiers]);
  return runStep<LineClasses, typeof lineClassesOutputSchema>(
    deps,
    'lineClasses',
    input,
    inputs,
    lineClassesOutputSchema,
    async (run) => {
      const call = await readCallText(deps.store, input);
      const lines = linesToClassify(
        call.utterances.map((u) => ({
          index: u.utterance.index,
          speaker: u.utterance.speaker,
          text: u.text,
        })),
        classifiers,
      );
      // A line said again word for word, to the same models, shares its scores (unit-requests.ts).
      const asks = lines.map((l) => ({ ...l, key: l.index, asks: JSON.stringify([l.models, l.text]) }));
      await answerDistinct(run, asks, 1, (line) => classifyLine(deps.service, line, (c) => run.request(c)));
      const utterances = lines.map((l) => ({ index: l.index, lineClasses: run.done.get(l.index)! }));
      return { step: 'lineClasses' as const, callId: input.callId, classifiers, utterances };
    },
  );
}

/** A stored result's lines classified again (`callpipe rescore` with a rule file's classifier rules). */
export interface ResultLineClassifier {
  /** Every line the pairs classify carries the scores of each of its models already. */
  current(doc: Pick<ResultDocument, 'utterances'>): boolean;
  /**
   * The result's utterances with the pairs' lines classified: only the (line, model) scores missing, or
   * all of them with `all`; other models' scores are kept. `requests`: the classify requests sent.
   */
  classify(
    doc: Pick<ResultDocument, 'utterances'>,
    all: boolean,
  ): Promise<{ utterances: ResultUtterance[]; requests: number }>;
}

/** A stored line's text as the pipeline's step read it: cleaned (else recognized) and redacted. */
const storedLines = (doc: Pick<ResultDocument, 'utterances'>) =>
  doc.utterances.map((u) => ({ index: u.index, speaker: u.speaker, text: (u.cleanedText ?? u.text).trim() }));

/**
 * `pacer`: the text workers' (activities/nlp/pacing.ts), so a rescore's requests share the account's rate
 * with the pipeline's text steps of the same process.
 */
export function resultLineClassifier(
  service: ServiceClient,
  classifiers: readonly LineClassifier[],
  pacer: RequestPacer = unpaced,
): ResultLineClassifier {
  const missing = (doc: Pick<ResultDocument, 'utterances'>, all: boolean) => {
    const stored = new Map(doc.utterances.map((u) => [u.index, u.lineClasses ?? {}]));
    return linesToClassify(storedLines(doc), classifiers)
      .map((l) => ({ ...l, models: l.models.filter((m) => all || stored.get(l.index)?.[m] === undefined) }))
      .filter((l) => l.models.length > 0);
  };
  return {
    current: (doc) => missing(doc, false).length === 0,
    async classify(doc, all) {
      // Counted per call: the pages' calls share this classifier and run side by side.
      let requests = 0;
      const send: Send = async (call) => {
        await pacer.acquire();
        requests++;
        return call({});
      };
      const scored = new Map<number, LineClasses>();
      // A line said again word for word, to the same models, shares its scores, as in the step.
      const byText = new Map<string, LineClasses>();
      for (const line of missing(doc, all)) {
        const asks = JSON.stringify([line.models, line.text]);
        const scores = byText.get(asks) ?? (await classifyLine(service, line, send));
        byText.set(asks, scores);
        scored.set(line.index, scores);
      }
      const utterances = doc.utterances.map((u) =>
        scored.has(u.index) ? { ...u, lineClasses: { ...u.lineClasses, ...scored.get(u.index) } } : u,
      );
      return { utterances, requests };
    },
  };
}
