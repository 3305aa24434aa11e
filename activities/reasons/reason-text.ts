/**
 * What of a call a reasons model reads (schemas/reasons.ts, `reasonsText`): the customer's words in time
 * order, or the summary; from the redacted result, so no personal value reaches a training file or the
 * classifier. The customer's first `chars` characters (CALLPIPE_REASONS_CHARS, default 600): a customer
 * says why they call near the start; the same cut serves training and classifying. A summary whole, up
 * to spec 03's longest text, 3,000.
 */
import { TRAINING_LIMITS } from '../../schemas/classifier-limits.ts';
import type { ReasonTextChoice } from '../../schemas/reasons.ts';

/** The parts of result.json the text is taken from. */
export interface ReasonSource {
  utterances: readonly { speaker: string; text: string; cleanedText?: string | null | undefined }[];
  summary?: { text: string } | null | undefined;
}

/** Placeholders of words nobody could recognize (`〈不明〉`): noise to a classifier. */
const UNKNOWN = /〈[^〉]*〉/gu;

function firstChars(text: string, n: number): string {
  const cs = [...text];
  return cs.length <= n ? text : cs.slice(0, n).join('');
}

/** The text to classify ('' when the call has none). */
export function reasonText(doc: ReasonSource, { text, chars }: ReasonTextChoice): string {
  if (text === 'summary') return firstChars((doc.summary?.text ?? '').trim(), TRAINING_LIMITS.textChars);
  const customer = doc.utterances.filter((u) => u.speaker === 'customer');
  const said = (customer.length > 0 ? customer : doc.utterances)
    .map((u) => (u.cleanedText ?? u.text).replace(UNKNOWN, '').trim())
    .filter((t) => t !== '');
  return firstChars(said.join(' '), Math.min(chars, TRAINING_LIMITS.textChars));
}
