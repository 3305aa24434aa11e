/**
 * What a call's staged outputs say, as result.json holds it: its speakers, its utterances (each with its
 * cleaned text, sentiment, dialog acts and redaction records), and the call-level summaries of sentiment,
 * dialog acts and redaction. Both the insights stage (the rules read these) and publish (result.json
 * holds them) build them here, so both read the call the same way. Pure.
 */
import type {
  DialogActsOutput,
  FillersOutput,
  LineClassesOutput,
  QualityOutput,
  RedactionOutput,
  ResultDocument,
  ResultUtterance,
  SentimentOutput,
} from '../../schemas/result.ts';
import type { Timeline } from '../../schemas/transcript.ts';

/** The staged outputs a call's content is built from (absent: the step failed or did not run). */
export interface CallTextParts {
  timeline: Timeline;
  fillers?: FillersOutput | undefined;
  sentiment?: SentimentOutput | undefined;
  dialogActs?: DialogActsOutput | undefined;
  /** The redaction step's records, when it ran (the timeline is then the redacted one). */
  redaction?: RedactionOutput | undefined;
  /** The quality step's misrecognition detection, when it ran. */
  quality?: QualityOutput | undefined;
  /** The line classification step's scores, when the rule file asked for them. */
  lineClasses?: LineClassesOutput | undefined;
}

/** Speakers of the timeline, then any an utterance names that the timeline's list lacks. */
export function callSpeakers(timeline: Timeline): string[] {
  return [...new Set([...timeline.speakers, ...timeline.utterances.map((u) => u.speaker)])];
}

/** result.json's utterances, in time order. */
export function resultUtterances(parts: CallTextParts): ResultUtterance[] {
  const { timeline, fillers, sentiment, dialogActs, redaction } = parts;
  const cleaned = new Map(fillers?.utterances.map((u) => [u.index, u]));
  const felt = new Map(sentiment?.utterances.map((u) => [u.index, u.sentiment]));
  const acts = new Map(dialogActs?.utterances.map((u) => [u.index, u.dialogActs]));
  const masked = new Map(redaction?.utterances.map((u) => [u.index, u.redactions]));
  const checked = new Map(parts.quality?.utterances.map((u) => [u.index, u.misrecognition]));
  const classed = new Map(parts.lineClasses?.utterances.map((u) => [u.index, u.lineClasses]));
  const ordered = [...timeline.utterances].sort((a, b) => a.start - b.start || a.index - b.index);
  return ordered.map((u) => {
    const f = cleaned.get(u.index);
    return {
      index: u.index,
      speaker: u.speaker,
      track: u.track,
      session: u.session,
      start: u.start,
      end: u.end,
      text: u.text,
      ...(u.confidence !== undefined ? { confidence: u.confidence } : {}),
      ...(u.speakerConfidence !== undefined ? { speakerConfidence: u.speakerConfidence } : {}),
      ...(u.voice !== undefined ? { voice: u.voice } : {}),
      ...(u.joined ? { joined: true } : {}),
      normalizedText: f ? f.normalizedText : null,
      cleanedText: f ? f.cleanedText : null,
      fillers: f ? f.fillers : [],
      sentiment: felt.get(u.index) ?? null,
      // Absent when the step did not run (rules on dialog acts are then "unavailable").
      ...(dialogActs ? { dialogActs: acts.get(u.index) ?? null } : {}),
      ...(checked.has(u.index) ? { misrecognition: checked.get(u.index) } : {}),
      ...(classed.has(u.index) ? { lineClasses: classed.get(u.index) } : {}),
      // Kind, where the mask is and who found it: never the value, nor where it was.
      ...(redaction
        ? {
            redactions: (masked.get(u.index) ?? []).map(({ kind, begin, end, source, digest }) => ({
              kind,
              begin,
              end,
              source,
              ...(digest ? { digest } : {}),
            })),
          }
        : {}),
    };
  });
}

/** result.json's `sentiment`: null when the step did not run. */
export function sentimentSummary(sentiment: SentimentOutput | undefined): ResultDocument['sentiment'] {
  if (!sentiment) return null;
  return {
    scoring: sentiment.scoring,
    ...(sentiment.grain ? { grain: sentiment.grain } : {}),
    ...(sentiment.windowSeconds ? { windowSeconds: sentiment.windowSeconds } : {}),
    overall: sentiment.overall,
    bySpeaker: sentiment.bySpeaker,
    byQuarter: sentiment.byQuarter,
  };
}

/** result.json's `dialogActs`: how speech acts were classified. */
export function dialogActsSummary(dialogActs: DialogActsOutput): NonNullable<ResultDocument['dialogActs']> {
  return {
    grain: dialogActs.grain,
    ...(dialogActs.windowSeconds ? { windowSeconds: dialogActs.windowSeconds } : {}),
    units: dialogActs.units,
  };
}

/** The call's length for its talk time: the probe's, else the timeline's (a probe without one). */
export function talkDuration(probeSeconds: number, timeline: Timeline): number {
  return probeSeconds || timeline.durationSeconds;
}
