/**
 * A stored result classified again with a reasons model (`callpipe rescore` with CALLPIPE_REASONS_MODEL):
 * its redacted text, taken as the pipeline's reasons step takes it (reason-text.ts), sent in one
 * request. Whether a result is current: it was classified with this model from the same text.
 */
import { REASONS_KEPT, type CallReasons, type ReasonsSettings } from '../../schemas/reasons.ts';
import type { ResultDocument } from '../../schemas/result.ts';
import type { ServiceClient } from '../../service/index.ts';
import { reasonText } from './reason-text.ts';
import { unpaced, type RequestPacer } from '../nlp/pacing.ts';

export interface ResultClassifier {
  /** The result was classified with this model from this text already. */
  current(doc: Pick<ResultDocument, 'reasons'>): boolean;
  /**
   * The result's reasons (undefined when it has no text to classify: nothing is sent) and the classify
   * requests sent for it (the model list is asked once per page, for every call of it, and not counted).
   */
  classify(doc: ResultDocument): Promise<{ reasons: CallReasons | undefined; requests: number }>;
}

/** result.json's `reasons` of a classification: the best classes, the model, what was classified. */
export function callReasonsOf(
  classes: readonly { class: string; score: number }[],
  asked: ReasonsSettings,
  text: string,
  trainedAt: string | null,
): CallReasons {
  return {
    top: classes.slice(0, REASONS_KEPT).map((r) => ({ class: r.class, score: r.score })),
    modelId: asked.model,
    trainedAt,
    text: asked.text,
    chars: asked.chars,
    characters: [...text].length,
    classifiedAt: new Date().toISOString(),
  };
}

/**
 * `pacer`: the text workers' (activities/nlp/pacing.ts), so a rescore's requests share the account's rate
 * with the pipeline's text steps of the same process.
 */
export function reasonsClassifier(
  service: ServiceClient,
  asked: ReasonsSettings,
  pacer: RequestPacer = unpaced,
): ResultClassifier {
  let trainedAt: Promise<string | null> | undefined;
  // One list request per batch page, not one per call; a failed one is asked again.
  const createdAt = () =>
    (trainedAt ??= pacer
      .acquire()
      .then(() => service.classifier.list())
      .then(
        ({ result }) => result.find((m) => m.model_id === asked.model)?.created_at ?? null,
        (err: unknown) => {
          trainedAt = undefined;
          throw err;
        },
      ));
  return {
    current: (doc) =>
      doc.reasons?.modelId === asked.model &&
      doc.reasons.text === asked.text &&
      doc.reasons.chars === asked.chars,
    async classify(doc) {
      const text = reasonText(doc, asked);
      if (text === '') return { reasons: undefined, requests: 0 };
      await pacer.acquire();
      const { result } = await service.classifier.classify(asked.model, text);
      return { reasons: callReasonsOf(result, asked, text, await createdAt()), requests: 1 };
    },
  };
}
