/**
 * Keywords of a whole call (spec 01: `/nlp/v1/keyword`). The document goes as an array of sentences
 * (Rule 2: already separated, so `do_segment` is moot), in time order; `max_keyword_num` (Rule 4) is
 * configurable. The service's `form` of a keyword is its `text` in our outputs, as a filler's is. The
 * text is the redacted one; words that come only from its masks are dropped.
 */
import { keywordsOutputSchema } from '../../schemas/result.ts';
import { splitSentences } from '../../service/nlp/sentences.ts';
import { readCallText, type CallUtterance } from './call-text.ts';
import { runStep, type NlpActivityDeps } from './step.ts';
import { DEFAULT_CALL_KEYWORDS, type ExtractKeywordsInput, type NlpStepOutput } from './types.ts';

/** A redaction's mask in the text (`[氏名]`, `[電話番号 ***5678]`): brackets appear in no other text. */
const MASK = /\[[^[\]\n]{1,60}\]/gu;

/**
 * Keywords without those the extraction took from masks: `[氏名]` said twenty times makes `氏名` look
 * important, and says nothing about the call. A keyword also said outside the masks stays.
 */
function withoutMaskWords<K extends { form: string }>(
  keywords: readonly K[],
  sentences: readonly string[],
): K[] {
  const text = sentences.join('\n');
  const masks = text.match(MASK) ?? [];
  const outside = text.replace(MASK, '\n');
  return keywords.filter(
    (k) => !/[[\]]/u.test(k.form) && (outside.includes(k.form) || !masks.some((m) => m.includes(k.form))),
  );
}

/** The call's sentences in time order, an utterance of several sentences split into them. */
export function callSentences(utterances: readonly CallUtterance[]): string[] {
  return utterances.flatMap((u) => splitSentences(u.text).map((s) => s.trim())).filter((s) => s !== '');
}

export async function extractKeywords(
  deps: NlpActivityDeps,
  input: ExtractKeywordsInput,
): Promise<NlpStepOutput> {
  const maxKeywords = input.maxKeywords ?? DEFAULT_CALL_KEYWORDS;
  const inputs = JSON.stringify([input.timelineKey, input.fillersKey ?? null, maxKeywords]);
  return runStep(deps, 'keywords', input, inputs, keywordsOutputSchema, async (run) => {
    const text = await readCallText(deps.store, input);
    const sentences = callSentences(text.utterances);
    const base = { step: 'keywords' as const, callId: input.callId, maxKeywords };
    if (sentences.length === 0) return { ...base, keywords: [] };
    const res = await run.request((o) => deps.service.nlp.keyword(sentences, { ...o, maxKeywords }));
    run.progress(1, 1);
    const kept = withoutMaskWords(res.result, sentences);
    return { ...base, keywords: kept.map((k) => ({ text: k.form, score: k.score })) };
  });
}
