/**
 * Rules and categories of a rule file (schemas/rules.ts) evaluated over one call's result: each rule
 * yields whether it held and the points (utterances or events, with times) where it did; a category
 * is `all` or `any` of its rules. Everything a rule reads is in result.json (texts, speakers, times,
 * sentiment, dialog acts, redaction records, metrics), so a stored result can be scored again without
 * recognizing or analysing anything (`callpipe rescore`). Pure.
 *
 * A rule whose data the call lacks (sentiment when that step failed, dialog acts when they were not
 * analysed, redaction records when redaction did not run) does not hold, and says so in `unavailable`:
 * a scorecard question it answers is then "not applicable", not a silent "no". So does a rule scoped to
 * a speaker on a call whose speakers were not told apart (one track heard as one voice, or `mixed`): it
 * would count what everyone said for that one speaker.
 */
import type { Category, Rule, TimeWindow } from '../../schemas/rules.ts';
import type {
  CallMetrics,
  CategoryResult,
  InsightPoint,
  ResultDocument,
  ResultUtterance,
} from '../../schemas/result.ts';
import { labelOfMean } from '../../schemas/sentiment-label.ts';
import { textUnits } from '../../schemas/text-units.ts';
import { DEFAULT_TEXT_GRAINS, type TextGrain } from '../../schemas/text-grains.ts';
import { redactionRecords, type RedactedCall } from './redaction-records.ts';
import { RuleTextMatcher } from './text-match.ts';
import { roundThousandths } from '../../schemas/units.ts';
import { MIXED_SPEAKER } from '../media/channels.ts';

/** What rules read of a result (result.json without its insights). */
export type ScoredCall = Pick<ResultDocument, 'speakers' | 'utterances' | 'talk' | 'sentiment'> &
  Partial<Pick<ResultDocument, 'dialogActs' | 'reasons'>> &
  Pick<RedactedCall, 'redaction'> & { audio: Pick<ResultDocument['audio'], 'durationSeconds'> };

export interface RuleOutcome {
  held: boolean;
  points: InsightPoint[];
  /** Data the rule needed that the call lacks. */
  unavailable?: string;
}

export interface EvaluationContext {
  call: ScoredCall;
  metrics: CallMetrics;
  /**
   * Metrics with another silence or overlap threshold (a rule's `minSeconds`), or over a window of the
   * call (a metric rule's `window`), computed on demand.
   */
  metricsWith(options: {
    silenceSeconds?: number;
    overlapSeconds?: number;
    window?: TimeWindow;
  }): CallMetrics;
  /** Categories evaluated so far, by name (a `category` rule reads them). */
  categories: ReadonlyMap<string, CategoryResult>;
}

const pointOf = (u: Pick<ResultUtterance, 'start' | 'end' | 'index'>): InsightPoint => ({
  start: u.start,
  end: u.end,
  utterance: u.index,
});
const eventPoint = (e: { start: number; end: number }): InsightPoint => ({
  start: e.start,
  end: e.end,
  utterance: null,
});

/** The window as [from, to] seconds of a call of `duration` seconds. */
export function windowRange(window: TimeWindow | undefined, duration: number): [number, number] {
  if (!window) return [0, Number.POSITIVE_INFINITY];
  if ('first' in window) return [0, window.first];
  if ('last' in window) return [Math.max(0, duration - window.last), Number.POSITIVE_INFINITY];
  return [(duration * window.fromPercent) / 100, (duration * window.toPercent) / 100];
}

/** What a speaker-scoped rule lacks on a call whose speakers were not told apart (see the module comment). */
const SPEAKERS_UNAVAILABLE = 'speakers told apart';

/**
 * Whether the call's speakers were told apart: at least two named ones (a track each, or voices of one
 * track). One named speaker, or only `mixed`, is a call heard as one voice, whatever its people.
 */
function speakersToldApart(call: Pick<ScoredCall, 'speakers'>): boolean {
  return call.speakers.filter((s) => s !== MIXED_SPEAKER).length >= 2;
}

function speakerFilter(speaker: string | undefined): (s: string) => boolean {
  if (!speaker) return () => true;
  return (s) => s === speaker;
}

function scope<T extends { start: number }>(
  items: readonly T[],
  rule: { window?: TimeWindow | undefined },
  duration: number,
  speakerOf: (item: T) => string | null,
  isSpeaker: (s: string) => boolean,
): T[] {
  const [from, to] = windowRange(rule.window, duration);
  return items.filter((i) => {
    const s = speakerOf(i);
    return i.start >= from && i.start <= to && (s === null || isSpeaker(s));
  });
}

/** The call's utterances inside the rule's window, of its speaker when it names one. */
function scopedUtterances(
  call: ScoredCall,
  rule: { window?: TimeWindow | undefined; speaker?: string | undefined },
): ResultUtterance[] {
  return scope(
    call.utterances,
    rule,
    call.audio.durationSeconds,
    (u) => u.speaker,
    speakerFilter(rule.speaker),
  );
}

function counted(points: InsightPoint[], minCount: number): RuleOutcome {
  return { held: points.length >= minCount, points };
}

function phrase(rule: Extract<Rule, { kind: 'phrase' }>, ctx: EvaluationContext): RuleOutcome {
  const utterances = scopedUtterances(ctx.call, rule);
  const matcher = new RuleTextMatcher(rule.terms, rule.patterns);
  // The cleaned text, when filler removal ran: a filler inside a phrase must not hide it.
  const hits = utterances.filter((u) => matcher.matches(u.cleanedText ?? u.text));
  if (rule.match === 'any') return counted(hits.map(pointOf), rule.minCount);
  const found = new Set(hits.flatMap((u) => matcher.found(u.cleanedText ?? u.text)));
  return {
    held: matcher.keys.every((k) => found.has(k)) && hits.length >= rule.minCount,
    points: hits.map(pointOf),
  };
}

function sentiment(rule: Extract<Rule, { kind: 'sentiment' }>, ctx: EvaluationContext): RuleOutcome {
  const { call } = ctx;
  if (!call.sentiment) return { held: false, points: [], unavailable: 'sentiment' };
  const analysed = scope(
    call.utterances.filter((u) => u.sentiment !== null),
    rule,
    call.audio.durationSeconds,
    (u) => u.speaker,
    speakerFilter(rule.speaker),
  );
  const emotions = rule.emotions ? new Set<string>(rule.emotions) : undefined;
  const test = (label: string, value: number) =>
    (rule.label === undefined || rule.label === label) &&
    (rule.below === undefined || value < rule.below) &&
    (rule.above === undefined || value > rule.above);
  if (rule.scope === 'utterance') {
    const hits = analysed.filter(
      (u) =>
        test(u.sentiment!.label, u.sentiment!.value) &&
        (!emotions || u.sentiment!.emotions.some((e) => e.labels.some((l) => emotions.has(l)))),
    );
    const unitOf = unitsOf(
      call.utterances.filter((u) => u.sentiment !== null),
      call.sentiment,
    );
    return countedUnits(hits, unitOf, rule.minCount);
  }
  if (analysed.length === 0) return { held: false, points: [] };
  const mean = analysed.reduce((n, u) => n + u.sentiment!.value, 0) / analysed.length;
  const held = test(labelOfMean(mean), mean);
  return {
    held,
    points: held ? [{ start: analysed[0]!.start, end: analysed.at(-1)!.end, utterance: null }] : [],
  };
}

/**
 * The unit (schemas/text-grains.ts) each analysed utterance's value came from, cut again from the result
 * as the step cut it: by its recorded grain and window length (a result without them: per utterance).
 * minCount counts units: the utterances of one turn or window share one sentiment and one set of speech
 * acts, so two negative utterances of one negative window are one negative moment, not two.
 */
function unitsOf(
  analysed: readonly ResultUtterance[],
  step: { grain?: TextGrain | undefined; windowSeconds?: number | undefined } | null | undefined,
): Map<number, string> {
  const units = textUnits(
    analysed.map((u) => ({ utterance: u, text: u.cleanedText ?? u.text })),
    step?.grain ?? 'utterance',
    step?.windowSeconds ?? DEFAULT_TEXT_GRAINS.windowSeconds,
  );
  const out = new Map<number, string>();
  units.forEach((unit, i) => unit.utterances.forEach((u) => out.set(u.utterance.index, String(i))));
  return out;
}

/** Holds when the hits come from at least `minCount` units; the points are the hits' utterances. */
function countedUnits(hits: readonly ResultUtterance[], unitOf: Map<number, string>, minCount: number) {
  const units = new Set(hits.map((u) => unitOf.get(u.index) ?? `u${u.index}`));
  return { held: units.size >= minCount, points: hits.map(pointOf) };
}

/** The speaker who talked last before `t` (whose turn a silence followed). */
function lastSpeakerBefore(call: ScoredCall, t: number): string | null {
  let best: ResultUtterance | undefined;
  for (const u of call.utterances) if (u.end <= t + 1e-6 && (!best || u.end > best.end)) best = u;
  return best?.speaker ?? null;
}

function events(rule: Extract<Rule, { kind: 'silence' | 'overlap' | 'hold' }>, ctx: EvaluationContext) {
  const { call } = ctx;
  const duration = call.audio.durationSeconds;
  const isSpeaker = speakerFilter(rule.speaker);
  if (rule.kind === 'silence') {
    const metrics =
      rule.minSeconds !== undefined ? ctx.metricsWith({ silenceSeconds: rule.minSeconds }) : ctx.metrics;
    // A silence's speaker: whoever talked last before it (the one left waiting for an answer).
    const silences = rule.includeHolds ? metrics.silences : metrics.silences.filter((s) => !s.hold);
    return scope(silences, rule, duration, (s) => lastSpeakerBefore(call, s.start) ?? '', isSpeaker);
  }
  if (rule.kind === 'overlap') {
    const metrics =
      rule.minSeconds !== undefined ? ctx.metricsWith({ overlapSeconds: rule.minSeconds }) : ctx.metrics;
    // An overlap's speaker: the one who started talking over the other.
    return scope(metrics.overlaps, rule, duration, (o) => o.interrupter ?? '', isSpeaker);
  }
  return scope(ctx.metrics.holds, rule, duration, (h) => h.speaker, isSpeaker).filter(
    (h) =>
      (rule.minSeconds === undefined || h.seconds >= rule.minSeconds) &&
      (rule.maxSeconds === undefined || h.seconds <= rule.maxSeconds),
  );
}

/** The value of a metric for the call, or for one speaker; null when the call cannot give it. */
function metricValue(
  metric: Extract<Rule, { kind: 'metric' }>['metric'],
  speaker: string | undefined,
  ctx: Pick<EvaluationContext, 'call' | 'metrics'>,
  windowed = false,
): number | null {
  const { call, metrics } = ctx;
  // A speaker's figure on a call whose speakers were not told apart would be everyone's.
  if (speaker && !speakersToldApart(call)) return null;
  const who = speaker;
  const of = who ? metrics.bySpeaker.find((s) => s.speaker === who) : undefined;
  if (who && !of) return null;
  const talk = metrics.bySpeaker.reduce((n, s) => n + s.talkSeconds, 0);
  switch (metric) {
    case 'durationSeconds':
      return metrics.durationSeconds;
    case 'silenceSeconds':
      return metrics.silenceSeconds;
    case 'overlapSeconds':
      return metrics.overlapSeconds;
    case 'holdSeconds':
      return metrics.holdSeconds;
    case 'timeToFirstAgentSeconds':
      return metrics.timeToFirstAgentSeconds;
    case 'talkShare':
      if (!of) return null;
      // Over a window, the share of the window's length (as `talk` gives it for the whole call).
      if (windowed)
        return metrics.durationSeconds > 0
          ? Math.min(1, roundThousandths(of.talkSeconds / metrics.durationSeconds))
          : 0;
      return call.talk.bySpeaker.find((s) => s.speaker === who)?.talkShare ?? null;
    case 'talkToListen':
      return of?.talkToListen ?? null;
    case 'speechRate':
      if (of) return of.speechRate;
      return talk > 0
        ? roundThousandths(metrics.bySpeaker.reduce((n, s) => n + s.characters, 0) / talk)
        : null;
    case 'fillersPerMinute': {
      if (of) return of.fillersPerMinute;
      if (metrics.bySpeaker.some((s) => s.fillers === null) || talk <= 0) return null;
      return roundThousandths(metrics.bySpeaker.reduce((n, s) => n + (s.fillers ?? 0), 0) / (talk / 60));
    }
    case 'longestMonologueSeconds':
      return of ? of.longestMonologueSeconds : (metrics.longestMonologue?.seconds ?? 0);
  }
}

function metric(rule: Extract<Rule, { kind: 'metric' }>, ctx: EvaluationContext): RuleOutcome {
  const duration = ctx.call.audio.durationSeconds;
  const metrics = rule.window ? ctx.metricsWith({ window: rule.window }) : ctx.metrics;
  const value = metricValue(
    rule.metric,
    rule.speaker,
    { call: ctx.call, metrics },
    rule.window !== undefined,
  );
  if (value === null) return { held: false, points: [], unavailable: `metric ${rule.metric}` };
  const held =
    (rule.above === undefined || value > rule.above) && (rule.below === undefined || value < rule.below);
  const [from, to] = windowRange(rule.window, duration);
  return {
    held,
    points: held
      ? [{ start: roundThousandths(from), end: roundThousandths(Math.min(to, duration)), utterance: null }]
      : [],
  };
}

function dialogAct(rule: Extract<Rule, { kind: 'dialogAct' }>, ctx: EvaluationContext): RuleOutcome {
  const { call } = ctx;
  if (!call.utterances.some((u) => Array.isArray(u.dialogActs)))
    return { held: false, points: [], unavailable: 'dialog acts' };
  const utterances = scopedUtterances(call, rule);
  const hits = utterances.filter((u) => {
    const acts = u.dialogActs ?? [];
    return rule.match === 'any'
      ? rule.acts.some((a) => acts.includes(a))
      : rule.acts.every((a) => acts.includes(a));
  });
  const unitOf = unitsOf(
    call.utterances.filter((u) => Array.isArray(u.dialogActs)),
    call.dialogActs,
  );
  return countedUnits(hits, unitOf, rule.minCount);
}

function redaction(rule: Extract<Rule, { kind: 'redaction' }>, ctx: EvaluationContext): RuleOutcome {
  const { call } = ctx;
  const records = redactionRecords(call);
  if (!records) return { held: false, points: [], unavailable: 'redaction records' };
  const byIndex = new Map(call.utterances.map((u) => [u.index, u]));
  const kinds = rule.types ? new Set(rule.types) : undefined;
  const utterances = [...new Set(records.filter((r) => !kinds || kinds.has(r.kind)).map((r) => r.utterance))]
    .map((i) => byIndex.get(i))
    .filter((u): u is ResultUtterance => u !== undefined);
  const scoped = scope(
    utterances,
    rule,
    call.audio.durationSeconds,
    (u) => u.speaker,
    speakerFilter(rule.speaker),
  );
  return counted(scoped.map(pointOf), rule.minCount);
}

/** The call's best reason is one of the rule's classes, with at least its score; over the whole call. */
function reason(rule: Extract<Rule, { kind: 'reason' }>, ctx: EvaluationContext): RuleOutcome {
  const best = ctx.call.reasons?.top[0];
  if (!best) return { held: false, points: [], unavailable: 'call reasons' };
  const held = rule.classes.includes(best.class) && best.score >= rule.minScore;
  const end = roundThousandths(ctx.call.audio.durationSeconds);
  return { held, points: held ? [{ start: 0, end, utterance: null }] : [] };
}

/**
 * The lines of the rule's speaker whose score for its class by its model is above `above`. Unavailable
 * when no line of the call was classified with the model (the step did not run, or failed).
 */
function classifier(rule: Extract<Rule, { kind: 'classifier' }>, ctx: EvaluationContext): RuleOutcome {
  if (!ctx.call.utterances.some((u) => u.lineClasses?.[rule.model] !== undefined))
    return { held: false, points: [], unavailable: `line classes of model ${rule.model}` };
  const lines = scopedUtterances(ctx.call, rule);
  const hits = lines.filter((u) => (u.lineClasses?.[rule.model]?.[rule.class] ?? 0) > rule.above);
  return counted(hits.map(pointOf), rule.minCount);
}

function test(rule: Rule, ctx: EvaluationContext): RuleOutcome {
  if (
    rule.kind !== 'category' &&
    rule.kind !== 'reason' &&
    rule.speaker !== undefined &&
    !speakersToldApart(ctx.call)
  )
    return { held: false, points: [], unavailable: SPEAKERS_UNAVAILABLE };
  switch (rule.kind) {
    case 'phrase':
      return phrase(rule, ctx);
    case 'sentiment':
      return sentiment(rule, ctx);
    case 'silence':
    case 'overlap':
    case 'hold':
      return counted(events(rule, ctx).map(eventPoint), rule.minCount);
    case 'metric':
      return metric(rule, ctx);
    case 'dialogAct':
      return dialogAct(rule, ctx);
    case 'redaction':
      return redaction(rule, ctx);
    case 'reason':
      return reason(rule, ctx);
    case 'classifier':
      return classifier(rule, ctx);
    case 'category': {
      const c = ctx.categories.get(rule.category);
      if (!c) return { held: false, points: [], unavailable: `category ${rule.category}` };
      return {
        held: c.matched,
        points: c.points,
        ...(c.unavailable ? { unavailable: c.unavailable.join(', ') } : {}),
      };
    }
  }
}

/** One rule: its test, then `negate` (a negated rule has no points: it holds where nothing was found). */
export function evaluateRule(rule: Rule, ctx: EvaluationContext): RuleOutcome {
  const outcome = test(rule, ctx);
  if (outcome.unavailable) return { held: false, points: [], unavailable: outcome.unavailable };
  if (!rule.negate) return outcome;
  return { held: !outcome.held, points: [] };
}

/** Points in time order, each once. */
function mergePoints(points: readonly InsightPoint[]): InsightPoint[] {
  const seen = new Map<string, InsightPoint>();
  for (const p of points) seen.set(`${p.utterance ?? ''}|${p.start}|${p.end}`, p);
  return [...seen.values()].sort((a, b) => a.start - b.start || a.end - b.end);
}

export function evaluateCategory(category: Category, ctx: EvaluationContext): CategoryResult {
  const outcomes = category.rules.map((r) => evaluateRule(r, ctx));
  const matched = category.match === 'all' ? outcomes.every((o) => o.held) : outcomes.some((o) => o.held);
  const unavailable = [...new Set(outcomes.flatMap((o) => (o.unavailable ? [o.unavailable] : [])))];
  return {
    name: category.name,
    matched,
    points: matched ? mergePoints(outcomes.filter((o) => o.held).flatMap((o) => o.points)) : [],
    ...(unavailable.length > 0 ? { unavailable } : {}),
  };
}
