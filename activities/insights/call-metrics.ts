/**
 * Call metrics (result.json's `metrics`): what supervisors read off a call, per call and per speaker,
 * from the utterances' absolute times and texts. The figures MiiTel and the cloud contact-center
 * suites report: silences of 3 s or more (configurable), overlaps of 1 s or more with who started
 * talking over whom, talk-to-listen ratio, speech rate in characters per second, fillers per minute of
 * talk (counted by the fillers step before it removed them), holds (a hold phrase, silence or music,
 * then a return phrase by the same speaker, with phrase lists from the rule file), the longest
 * monologue and the time to the agent's first utterance. Pure; thresholds come from the rule file
 * (schemas/rules.ts `metrics`), so a rescore recomputes them.
 */
import type { MetricsSettings } from '../../schemas/rules.ts';
import type { CallMetrics, ResultUtterance } from '../../schemas/result.ts';
import { DEFAULT_SPEAKERS } from '../media/channels.ts';
import { sweepEvents, union, type Interval } from '../../schemas/talk-time.ts';
import { roundSecondsToMs, roundThousandths } from '../../schemas/units.ts';
import { PhraseMatcher, spokenCharacters } from './text-match.ts';

/** The speaker label of the agent's track (channel 0 of a stereo call unless a manifest maps it). */
const AGENT_SPEAKER: string = DEFAULT_SPEAKERS[0];
/**
 * Between a hold phrase and the return phrase, the holding speaker's side may carry music or line
 * noise, which recognition turns into low-confidence text: such utterances do not end a hold.
 */
const NOISE_CONFIDENCE = 0.5;

export type MetricsUtterance = Pick<
  ResultUtterance,
  'index' | 'speaker' | 'start' | 'end' | 'text' | 'fillers' | 'cleanedText' | 'confidence'
>;

/** Sweep over every speaker's merged talk: the spans where `depth` or more speakers talk at once. */
function spansWithDepth(perSpeaker: ReadonlyMap<string, Interval[]>, depth: number): Interval[] {
  const events = sweepEvents(perSpeaker);
  const out: Interval[] = [];
  let level = 0;
  let since = 0;
  for (const e of events) {
    const before = level;
    level += e.d;
    if (before < depth && level >= depth) since = e.t;
    if (before >= depth && level < depth && e.t > since) out.push({ start: since, end: e.t });
  }
  return union(out);
}

function overlapEvents(
  perSpeaker: ReadonlyMap<string, Interval[]>,
  minSeconds: number,
): CallMetrics['overlaps'] {
  return spansWithDepth(perSpeaker, 2)
    .filter((o) => o.end - o.start >= minSeconds)
    .map((o) => {
      // Who talked at the overlap's start, and since when: the latest to start talked over the others.
      const talking = [...perSpeaker.entries()].flatMap(([speaker, spans]) => {
        const span = spans.find((s) => s.start <= o.start && s.end > o.start);
        return span ? [{ speaker, since: span.start }] : [];
      });
      const latest = Math.max(...talking.map((t) => t.since));
      const starters = talking.filter((t) => t.since === latest);
      return {
        start: roundSecondsToMs(o.start),
        end: roundSecondsToMs(o.end),
        seconds: roundSecondsToMs(o.end - o.start),
        speakers: talking.map((t) => t.speaker),
        interrupter: starters.length === 1 ? starters[0]!.speaker : null,
      };
    });
}

/**
 * On a one-track (mono) call the customer's acknowledgement ("はい、わかりました") is on the holder's
 * track too: this many utterances may come between the hold phrase and the return phrase.
 */
const ONE_TRACK_HOLD_INTERJECTIONS = 2;

function holdEvents(
  utterances: readonly MetricsUtterance[],
  settings: MetricsSettings,
  hasAgent: boolean,
  oneTrack: boolean,
): CallMetrics['holds'] {
  const hold = settings.hold;
  if (!hold) return [];
  const starts = new PhraseMatcher(hold.startPhrases);
  const returns = new PhraseMatcher(hold.returnPhrases);
  const out: CallMetrics['holds'] = [];
  let after = -Infinity;
  for (const [i, u] of utterances.entries()) {
    if (u.start < after || (hasAgent && u.speaker !== AGENT_SPEAKER) || !starts.matches(u.text)) continue;
    // The same speaker's next utterances that are speech, not the music or noise of the hold.
    const later = utterances
      .slice(i + 1)
      .filter(
        (v) =>
          v.speaker === u.speaker &&
          v.start >= u.end &&
          (v.confidence === undefined || v.confidence >= NOISE_CONFIDENCE),
      )
      .slice(0, oneTrack ? ONE_TRACK_HOLD_INTERJECTIONS + 1 : 1);
    const next = later.find((v) => returns.matches(v.text) || starts.matches(v.text));
    if (!next || !returns.matches(next.text)) continue;
    const seconds = next.start - u.end;
    if (seconds < hold.minSeconds || seconds > hold.maxSeconds) continue;
    out.push({
      start: roundSecondsToMs(u.end),
      end: roundSecondsToMs(next.start),
      seconds: roundSecondsToMs(seconds),
      speaker: u.speaker,
      startUtterance: u.index,
      returnUtterance: next.index,
    });
    after = next.start;
  }
  return out;
}

/** Runs of one speaker's talk, broken by another speaker starting or by a silence. */
function monologues(utterances: readonly MetricsUtterance[], breakSeconds: number) {
  const runs: { speaker: string; start: number; end: number }[] = [];
  for (const u of utterances) {
    const run = runs.at(-1);
    if (run && run.speaker === u.speaker && u.start - run.end < breakSeconds)
      run.end = Math.max(run.end, u.end);
    else runs.push({ speaker: u.speaker, start: u.start, end: u.end });
  }
  return runs;
}

/** The metrics of one call; see the module comment. `speakers`: every track's speaker, talking or not. */
export function callMetrics(
  input: readonly MetricsUtterance[],
  durationSeconds: number,
  speakers: readonly string[],
  settings: MetricsSettings,
): CallMetrics {
  const duration = Math.max(durationSeconds, 0);
  const clamp = (t: number) => Math.min(Math.max(t, 0), duration);
  const utterances = input
    .map((u) => ({ ...u, start: clamp(u.start), end: clamp(u.end) }))
    .sort((a, b) => a.start - b.start || a.index - b.index);
  const names = [...new Set([...speakers, ...utterances.map((u) => u.speaker)])];
  const hasAgent = names.includes(AGENT_SPEAKER);
  const perSpeaker = new Map(names.map((s) => [s, union(utterances.filter((u) => u.speaker === s))]));

  const overlaps = overlapEvents(perSpeaker, settings.overlapSeconds);
  const holds = holdEvents(utterances, settings, hasAgent, names.length <= 1);
  const talk = union([...perSpeaker.values()].flat());
  const silences: CallMetrics['silences'] = [];
  for (let i = 1; i < talk.length; i++) {
    const start = talk[i - 1]!.end;
    const end = talk[i]!.start;
    if (end - start < settings.silenceSeconds) continue;
    silences.push({
      start: roundSecondsToMs(start),
      end: roundSecondsToMs(end),
      seconds: roundSecondsToMs(end - start),
      hold: holds.some((h) => h.start < end && h.end > start),
    });
  }

  const runs = monologues(utterances, settings.silenceSeconds);
  const longest = runs.reduce<(typeof runs)[number] | undefined>(
    (best, r) => (!best || r.end - r.start > best.end - best.start ? r : best),
    undefined,
  );
  // Filler removal gives every utterance a cleaned text; none means the step did not run.
  const fillersRan = utterances.length === 0 || utterances.some((u) => u.cleanedText !== null);
  const talkOf = (s: string) => perSpeaker.get(s)!.reduce((sum, i) => sum + (i.end - i.start), 0);
  const totalTalk = names.reduce((sum, s) => sum + talkOf(s), 0);

  const bySpeaker = names.map((speaker) => {
    const own = utterances.filter((u) => u.speaker === speaker);
    const talkSeconds = talkOf(speaker);
    const listen = totalTalk - talkSeconds;
    const characters = own.reduce((n, u) => n + spokenCharacters(u.text), 0);
    const fillers = fillersRan ? own.reduce((n, u) => n + u.fillers.length, 0) : null;
    return {
      speaker,
      talkSeconds: roundSecondsToMs(talkSeconds),
      talkToListen: names.length > 1 && listen > 0 ? roundThousandths(talkSeconds / listen) : null,
      characters,
      speechRate: talkSeconds > 0 ? roundThousandths(characters / talkSeconds) : null,
      fillers,
      fillersPerMinute:
        fillers !== null && talkSeconds > 0 ? roundThousandths(fillers / (talkSeconds / 60)) : null,
      longestMonologueSeconds: roundSecondsToMs(
        Math.max(0, ...runs.filter((r) => r.speaker === speaker).map((r) => r.end - r.start)),
      ),
      interruptions: overlaps.filter((o) => o.interrupter === speaker).length,
    };
  });
  const firstAgent = utterances.find((u) => u.speaker === AGENT_SPEAKER);
  const sum = (events: readonly { seconds: number }[]) =>
    roundSecondsToMs(events.reduce((n, e) => n + e.seconds, 0));

  return {
    settings: {
      silenceSeconds: settings.silenceSeconds,
      overlapSeconds: settings.overlapSeconds,
      holdPhrases: settings.hold !== undefined,
    },
    durationSeconds: roundSecondsToMs(duration),
    silences,
    overlaps,
    holds,
    silenceSeconds: sum(silences),
    overlapSeconds: sum(overlaps),
    holdSeconds: sum(holds),
    longestMonologue: longest
      ? {
          speaker: longest.speaker,
          start: roundSecondsToMs(longest.start),
          end: roundSecondsToMs(longest.end),
          seconds: roundSecondsToMs(longest.end - longest.start),
        }
      : null,
    timeToFirstAgentSeconds: hasAgent && firstAgent ? roundSecondsToMs(firstAgent.start) : null,
    bySpeaker,
  };
}
