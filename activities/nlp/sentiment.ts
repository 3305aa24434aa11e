/**
 * Sentiment of every utterance (spec 01: `/nlp/v1/sentiment`, one sentence a request), one request per
 * distinct unit text of the configured grain (text-units.ts: an utterance, a turn or a window; each
 * utterance carries its unit's sentiment; unit-requests.ts), aggregated over the call, per speaker and
 * per quarter of the call by time.
 * The numeric scale is defined once, in schemas/result.ts (SENTIMENT_SCORING).
 */
import type { SentimentResult } from '../../schemas/service-nlp.ts';
import {
  SENTIMENT_SCORING,
  sentimentOutputSchema,
  type SentimentAggregate,
  type SentimentQuarter,
  type SentimentSummary,
  type UtteranceSentiment,
} from '../../schemas/result.ts';
import type { Utterance } from '../../schemas/transcript.ts';
import { labelOfMean } from '../../schemas/sentiment-label.ts';
import { readCallText } from './call-text.ts';
import { runStep, type NlpActivityDeps, type StepRun } from './step.ts';
import { byUtterance, eachUnit } from './unit-requests.ts';
import { textUnits } from '../../schemas/text-units.ts';
import { DEFAULT_SENTIMENT_CONCURRENCY, type AnalyzeSentimentInput, type NlpStepOutput } from './types.ts';
import { DEFAULT_TEXT_GRAINS } from '../../schemas/text-grains.ts';

/** The signed value of a label and its score: see SENTIMENT_SCORING. */
export function sentimentValue(label: UtteranceSentiment['label'], score: number): number {
  const magnitude = Math.min(1, Math.max(0, Math.abs(score)));
  if (label === 'Positive') return magnitude;
  if (label === 'Negative') return -magnitude;
  return 0;
}

export function toUtteranceSentiment(result: SentimentResult): UtteranceSentiment {
  return {
    label: result.sentiment,
    score: result.score,
    value: sentimentValue(result.sentiment, result.score),
    emotions: result.emotional_phrase.map((p) => ({
      form: p.form,
      labels: p.emotion
        .split(/[,、]/u)
        .map((l) => l.trim())
        .filter((l) => l !== ''),
    })),
  };
}

export function aggregateSentiment(items: readonly UtteranceSentiment[]): SentimentAggregate {
  const count = (label: UtteranceSentiment['label']) => items.filter((s) => s.label === label).length;
  if (items.length === 0) {
    return { utterances: 0, positive: 0, negative: 0, neutral: 0, meanValue: null, label: null };
  }
  const mean = items.reduce((sum, s) => sum + s.value, 0) / items.length;
  // Rounded so sums of floats do not make two equal calls' results differ in the last digit.
  const meanValue = Math.round(mean * 1e6) / 1e6;
  return {
    utterances: items.length,
    positive: count('Positive'),
    negative: count('Negative'),
    neutral: count('Neutral'),
    meanValue,
    label: labelOfMean(meanValue),
  };
}

function bySpeaker(
  entries: readonly { utterance: Utterance; sentiment: UtteranceSentiment }[],
  speakers: readonly string[],
): Record<string, SentimentAggregate> {
  const out: Record<string, SentimentAggregate> = {};
  const names = [...new Set([...speakers, ...entries.map((e) => e.utterance.speaker)])];
  for (const speaker of names) {
    out[speaker] = aggregateSentiment(
      entries.filter((e) => e.utterance.speaker === speaker).map((e) => e.sentiment),
    );
  }
  return out;
}

/** Quarter (0–3) of an utterance: the one holding its midpoint, in a call of `duration` seconds. */
export function quarterOf(utterance: Pick<Utterance, 'start' | 'end'>, duration: number): number {
  if (duration <= 0) return 0;
  const mid = (utterance.start + utterance.end) / 2;
  return Math.min(3, Math.max(0, Math.floor((mid / duration) * 4)));
}

/** The call-level part: overall, per speaker, per quarter (each quarter also per speaker). */
export function summarizeSentiment(
  utterances: readonly Utterance[],
  perUtterance: ReadonlyMap<number, UtteranceSentiment>,
  durationSeconds: number,
  speakers: readonly string[] = [],
): SentimentSummary {
  const lastEnd = utterances.reduce((m, u) => Math.max(m, u.end), 0);
  const duration = durationSeconds > 0 ? durationSeconds : lastEnd;
  const entries = utterances.flatMap((utterance) => {
    const sentiment = perUtterance.get(utterance.index);
    return sentiment ? [{ utterance, sentiment }] : [];
  });
  const byQuarter: SentimentQuarter[] = [0, 1, 2, 3].map((q) => {
    const inQuarter = entries.filter((e) => quarterOf(e.utterance, duration) === q);
    return {
      quarter: q + 1,
      start: (duration * q) / 4,
      end: (duration * (q + 1)) / 4,
      overall: aggregateSentiment(inQuarter.map((e) => e.sentiment)),
      bySpeaker: bySpeaker(inQuarter, speakers),
    };
  });
  return {
    scoring: SENTIMENT_SCORING,
    overall: aggregateSentiment(entries.map((e) => e.sentiment)),
    bySpeaker: bySpeaker(entries, speakers),
    byQuarter,
  };
}

export async function analyzeSentiment(
  deps: NlpActivityDeps,
  input: AnalyzeSentimentInput,
): Promise<NlpStepOutput> {
  const grain = input.grain ?? 'utterance';
  const windowSeconds = input.windowSeconds ?? DEFAULT_TEXT_GRAINS.windowSeconds;
  const inputs = JSON.stringify([input.timelineKey, input.fillersKey ?? null, grain, windowSeconds]);
  return runStep<UtteranceSentiment, typeof sentimentOutputSchema>(
    deps,
    'sentiment',
    input,
    inputs,
    sentimentOutputSchema,
    async (run: StepRun<UtteranceSentiment>) => {
      const text = await readCallText(deps.store, input);
      const units = textUnits(text.utterances, grain, windowSeconds);
      await eachUnit(run, units, input.concurrency ?? DEFAULT_SENTIMENT_CONCURRENCY, async (text, o) =>
        toUtteranceSentiment((await deps.service.nlp.sentiment(text, o)).result),
      );
      const perUtterance = byUtterance(units, run.done);
      const { timeline } = text;
      return {
        step: 'sentiment',
        callId: input.callId,
        grain,
        ...(grain !== 'utterance' ? { windowSeconds } : {}),
        ...summarizeSentiment(timeline.utterances, perUtterance, timeline.durationSeconds, timeline.speakers),
        utterances: timeline.utterances.map((u) => ({
          index: u.index,
          sentiment: perUtterance.get(u.index) ?? null,
        })),
      };
    },
  );
}
