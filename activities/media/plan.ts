/**
 * The session plan. Per track, the recording is cut into sessions that cover it with no gap or
 * overlap, none longer than `maxSessionSeconds`. Each cut goes in the middle of the longest silence
 * found in a search window; with no silence there, a hard cut at the window's end, flagged.
 *
 * Silences come from the channel analysis (channel-analysis.ts: conditioned audio, a threshold per
 * channel from its noise floor), which also decides which channels are recognized (channels.ts) and
 * counts what decoded: the recording's length, checked here against the timeline the probe read
 * (length-check.ts), so a decoder that drops audio mid-file fails the call at `plan`.
 *
 * Silence costs no recognition: a silence of at least `skipSilenceSeconds` (or one that spans the whole
 * track: a channel the analysis found silent) is not streamed. Sessions then cover the track's speech
 * only, each with {@link SKIP_MARGIN_SECONDS} of the skipped silence on its side (so no quiet onset
 * is lost), and keep their true times in the recording; a track with no speech at all has no session.
 *
 * Strategies only differ in where the window is:
 * - `fixed`: just before the limit (sessions as long as allowed, fewest sessions);
 * - `balanced`: around an even split of the rest of the track into sessions of a target length chosen
 *   from a concurrent-session budget, so that all sessions of all tracks run at once and the call's
 *   makespan is about one session (a 2-hour stereo call with budget 16: 8 sessions of 15 min per
 *   channel). The target never exceeds the limit and never drops below `minSessionSeconds`;
 * - `latency` (same-day calls): as many pieces as the account has sessions free now (`room`), none
 *   shorter than `latencyMinSessionSeconds`, so they all stream at once and the call takes about as long
 *   as its longest piece. Its cuts go only in silences of at least {@link LATENCY_CUT_SILENCE_SECONDS},
 *   never nearer than half that to speech: the piece ends later (up to the limit) rather than in a
 *   shorter gap. With sessions of other calls waiting, fewer than two free, or a room not known, the
 *   throughput plan (`throughputStrategy`) is cut instead: a backlog is served best by fewer sessions.
 */
import {
  PLAN_STRATEGIES,
  planOptionsSchema,
  sessionPlanSchema,
  type PlanOptions,
  type PlanSession,
  type ResolvedPlanOptions,
  type SessionPlan,
  type SessionRoom,
  type Silence,
  type Track,
} from '../../schemas/plan.ts';
import type { LengthCheck, ProbeResult } from '../../schemas/media-probe.ts';
import { analyzeChannels } from './channel-analysis.ts';
import { applyChannelAnalysis, planTracks } from './channels.ts';
import { MediaError } from './errors.ts';
import { checkLength } from './length-check.ts';
import { cutRanges, fileSpanPieces, gridPointIn } from './file-pieces.ts';
import { openInput } from './media-input.ts';
import { stageTracks, trackFiles, type TrackFiles, type TrackStaging } from './staged-tracks.ts';
import { intersectSilences } from './silence.ts';
import { timeBoundMs, withinTimeBound, type MediaTimeBounds } from './time-bound.ts';
import { roundSecondsToMs, roundThousandths } from '../../schemas/units.ts';
import { FILE_CUT_SILENCE_SECONDS, FILE_PIECE_MAX_SECONDS } from '../../schemas/recognition.ts';

/** Plan times live on a millisecond grid: 8 bytes of 8 kHz mu-law, 16 samples at 16 kHz. */
const GRID = 1000;
const toGrid = (seconds: number) => Math.round(seconds * GRID) / GRID;
const floorToGrid = (seconds: number) => Math.floor(seconds * GRID + 1e-6) / GRID;
/** A silence piece must be this long for its middle, rounded to the grid, to stay strictly inside it. */
const MIN_USABLE_SILENCE_SECONDS = 2 / GRID;
/** A search window never reaches back more than this fraction of the session it ends. */
const MAX_WINDOW_FRACTION = 0.5;
/** balanced: the window spans at most this fraction of the target on each side of the ideal cut. */
const BALANCED_WINDOW_FRACTION = 0.1;
/** Of a skipped silence, this much is streamed on each side: a quiet onset or tail under the threshold. */
const SKIP_MARGIN_SECONDS = 1;
/**
 * latency: the shortest silence a cut goes in, the cut at least half of it from speech on either side
 * (the recognizer ends an utterance after 0.2 s of quiet; a phrase's own tone gaps are 40 ms).
 */
export const LATENCY_CUT_SILENCE_SECONDS = 0.5;
/** latency: the window spans this fraction of the target on each side of the ideal cut. */
const LATENCY_WINDOW_FRACTION = 0.25;
/** latency: never more pieces than this per call, whatever the room (each is two activities in history). */
const LATENCY_MAX_SESSIONS = 128;

/** Where to look for the next cut, or `end` when the rest of the track is the last session. */
type Window = { lo: number; hi: number; ideal: number } | 'end';
type WindowRule = (start: number, duration: number) => Window;

/** The session length a balanced plan aims at. */
export function balancedTargetSeconds(
  durationSeconds: number,
  trackCount: number,
  options: ResolvedPlanOptions,
): number {
  const even = (durationSeconds * trackCount) / options.budget;
  // A call too long for one round of the budget at the session limit runs in k rounds: sessions of
  // even ÷ k fill every round, where sessions at the limit left the last round part empty (an example
  // in bench/README.md, "Figures behind the code").
  const rounds = Math.ceil(even / options.maxSessionSeconds - 1e-9);
  return Math.min(options.maxSessionSeconds, Math.max(options.minSessionSeconds, even / Math.max(1, rounds)));
}

function windowRule(
  options: ResolvedPlanOptions,
  target: number | undefined,
  { floor = options.minSessionSeconds, fraction = BALANCED_WINDOW_FRACTION } = {},
): WindowRule {
  const { maxSessionSeconds: max, searchWindowSeconds: window } = options;
  const reachBack = (start: number, hi: number, lo: number) =>
    Math.max(lo, start + (hi - start) * MAX_WINDOW_FRACTION);
  if (target === undefined) {
    return (start, duration) => {
      if (duration - start <= max) return 'end';
      const hi = start + max;
      return { lo: reachBack(start, hi, hi - window), hi, ideal: hi };
    };
  }
  // Around the target the window is narrower for short sessions, so their lengths stay near the target.
  const half = Math.min(window / 2, target * fraction);
  return (start, duration) => {
    const remaining = duration - start;
    // As many sessions as the target asks for, but never so many that one falls under the floor.
    const byTarget = Math.round(remaining / target);
    const byFloor = Math.max(1, Math.floor(remaining / floor + 1e-9));
    const left = Math.max(Math.min(byTarget, byFloor), Math.ceil(remaining / max - 1e-9));
    if (left <= 1) return 'end';
    const ideal = start + remaining / left;
    // Never past the limit, and never so late that the last session falls under the floor.
    const hi = Math.max(Math.min(ideal + half, start + max, duration - floor), ideal);
    const lo = reachBack(start, hi, Math.min(ideal - half, hi - half));
    return { lo, hi: Math.min(hi, start + max), ideal };
  };
}

/** Index of the first silence that ends after `t` (silences sorted by start, not overlapping). */
function firstEndingAfter(silences: Silence[], t: number): number {
  let lo = 0;
  let hi = silences.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (silences[mid]!.end <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The longest part of a silence inside [lo, hi]; among equally long ones, the one nearest the ideal cut
 * (the limit for `fixed`, the even split for `balanced`).
 */
function longestSilenceIn(
  silences: Silence[],
  window: { lo: number; hi: number; ideal: number },
  base: number,
): { silence: Silence; cut: number } | undefined {
  const { lo, hi, ideal } = window;
  let best: { silence: Silence; cut: number; length: number; distance: number } | undefined;
  for (let i = firstEndingAfter(silences, lo); i < silences.length && silences[i]!.start < hi; i++) {
    const s = silences[i]!;
    const from = Math.max(s.start, lo);
    const to = Math.min(s.end, hi);
    const length = to - from;
    if (length < MIN_USABLE_SILENCE_SECONDS) continue;
    const cut = cutOnGrid(base, from, to, (from + to) / 2);
    const distance = Math.abs(cut - ideal);
    if (
      !best ||
      length > best.length + 1e-9 ||
      (Math.abs(length - best.length) <= 1e-9 && distance < best.distance)
    ) {
      best = { silence: s, cut, length, distance };
    }
  }
  return best && { silence: best.silence, cut: best.cut };
}

/**
 * A cut in [lo, hi] nearest `want` on the span's 240-ms request grid (from `base`, the span's start;
 * file-pieces.ts gridPointIn), else at `want` on the millisecond grid. Every session of a span then starts
 * on the grid its pieces use: the service frames audio from a request's start, so the same utterances
 * come out at the same times by streams and by file pieces, and by streams cut differently.
 */
function cutOnGrid(base: number, lo: number, hi: number, want: number): number {
  return gridPointIn(base, lo, hi, want) ?? toGrid(want);
}

/**
 * What of a track is streamed: [0, duration] without its skipped silences (each less a margin on both
 * sides). `after` is the skipped silence a span ends in, absent for the span that ends the recording.
 */
export interface StreamedSpan {
  start: number;
  end: number;
  after?: Silence;
}

/** The spans of a track to stream, given its silences (sorted by start) and the skip threshold. */
function streamedSpans(durationSeconds: number, sorted: Silence[], skipSeconds: number): StreamedSpan[] {
  const spans: StreamedSpan[] = [];
  let start = 0;
  for (const s of sorted) {
    const length = Math.min(s.end, durationSeconds) - Math.max(s.start, 0);
    const wholeTrack = s.start <= 0 && s.end >= durationSeconds;
    if (!wholeTrack && length < skipSeconds) continue;
    const margin = Math.min(SKIP_MARGIN_SECONDS, length / 4);
    const end = s.start <= 0 ? 0 : toGrid(s.start + margin);
    if (end > start) spans.push({ start, end, after: { ...s } });
    start = s.end >= durationSeconds ? durationSeconds : Math.max(start, toGrid(s.end - margin));
  }
  if (durationSeconds > start) spans.push({ start, end: durationSeconds });
  return spans;
}

/** Sessions of one span of a track (indices are assigned by the caller). */
function planSpan(
  track: Track,
  span: StreamedSpan,
  sorted: Silence[],
  rule: WindowRule,
): Omit<PlanSession, 'index'>[] {
  const sessions: Omit<PlanSession, 'index'>[] = [];
  const base = { track: track.track, channel: track.channel, speaker: track.speaker };
  let start = span.start;
  for (;;) {
    const window = rule(start, span.end);
    if (window === 'end') {
      sessions.push({
        ...base,
        start,
        end: span.end,
        ...(span.after ? { cut: 'silence', silence: span.after } : { cut: 'end', silence: null }),
      });
      return sessions;
    }
    const found = longestSilenceIn(sorted, window, span.start);
    const end = found ? found.cut : cutOnGrid(span.start, start + 1 / GRID, window.hi, window.hi);
    sessions.push({
      ...base,
      start,
      end,
      cut: found ? 'silence' : 'hard',
      silence: found ? { ...found.silence } : null,
    });
    start = end;
  }
}

/**
 * latency: where to cut in `window` (the silence whose cut can come nearest the ideal), else in the first
 * silence after it that starts before `limit`. Only silences of {@link LATENCY_CUT_SILENCE_SECONDS} or
 * more are given; the cut stays half that from either edge, on the request grid from `base`.
 */
function latencyCut(
  cuttable: Silence[],
  window: { lo: number; hi: number; ideal: number },
  limit: number,
  base: number,
): { silence: Silence; cut: number } | undefined {
  const margin = LATENCY_CUT_SILENCE_SECONDS / 2;
  let best: { silence: Silence; cut: number; distance: number } | undefined;
  for (let i = firstEndingAfter(cuttable, window.lo); i < cuttable.length; i++) {
    const s = cuttable[i]!;
    const a = Math.ceil((s.start + margin) * GRID - 1e-6) / GRID;
    const b = Math.floor((s.end - margin) * GRID + 1e-6) / GRID;
    if (a > limit) break;
    if (b < a) continue;
    const lo = Math.max(a, window.lo);
    const hi = Math.min(b, window.hi);
    if (lo <= hi) {
      const cut = cutOnGrid(base, lo, hi, Math.min(hi, Math.max(lo, window.ideal)));
      const distance = Math.abs(cut - window.ideal);
      if (!best || distance < best.distance) best = { silence: s, cut, distance };
    } else if (a > window.hi) {
      // Past the window: the first silence long enough, cut in its middle (within the limit).
      if (best) break;
      return {
        silence: { ...s },
        cut: cutOnGrid(
          base,
          a,
          Math.min(b, limit),
          Math.min(Math.min(b, limit), Math.max(a, (s.start + s.end) / 2)),
        ),
      };
    }
  }
  return best && { silence: { ...best.silence }, cut: best.cut };
}

/** latency: the sessions of one span, cut only in silences long enough (see {@link latencyCut}). */
function planLatencySpan(
  track: Track,
  span: StreamedSpan,
  cuttable: Silence[],
  rule: WindowRule,
  options: ResolvedPlanOptions,
): Omit<PlanSession, 'index'>[] {
  const sessions: Omit<PlanSession, 'index'>[] = [];
  const base = { track: track.track, channel: track.channel, speaker: track.speaker };
  const max = options.maxSessionSeconds;
  const last = (start: number) =>
    sessions.push({
      ...base,
      start,
      end: span.end,
      ...(span.after ? { cut: 'silence', silence: span.after } : { cut: 'end', silence: null }),
    });
  let start = span.start;
  for (;;) {
    const window = rule(start, span.end);
    const fits = span.end - start <= max;
    if (window === 'end') {
      last(start);
      return sessions;
    }
    const found = latencyCut(cuttable, window, Math.min(start + max, span.end), span.start);
    // No cut worth making (none left, or one that would leave a sliver): the rest is one session.
    if (fits && (!found || span.end - found.cut < options.latencyMinSessionSeconds / 2)) {
      last(start);
      return sessions;
    }
    const end = found ? found.cut : cutOnGrid(span.start, start + 1 / GRID, start + max, start + max);
    sessions.push({
      ...base,
      start,
      end,
      cut: found ? 'silence' : 'hard',
      silence: found ? found.silence : null,
    });
    start = end;
  }
}

/** Whether a latency plan is cut, into how many pieces, or why not. */
export type LatencyChoice =
  { use: true; pieces: number; room: SessionRoom } | { use: false; reason: string; room?: SessionRoom };

/**
 * The room decides: sessions of other calls waiting (a backlog) or fewer than two free sessions mean the
 * throughput plan; else as many pieces as are free, none under the floor, at most
 * {@link LATENCY_MAX_SESSIONS}.
 */
export function latencyChoice(streamedSeconds: number, options: ResolvedPlanOptions): LatencyChoice {
  const { room } = options;
  if (!room) return { use: false, reason: "the account's free sessions are not known" };
  if (room.waiting > 0) {
    const sessions = room.waiting === 1 ? 'session waits' : 'sessions wait';
    return { use: false, reason: `${room.waiting} recognition ${sessions} for a slot`, room };
  }
  if (room.free < 2) return { use: false, reason: `${room.free} of ${room.limit} sessions free`, room };
  const byLength = Math.floor(streamedSeconds / options.latencyMinSessionSeconds + 1e-9);
  if (byLength < 2)
    return {
      use: false,
      reason: `too short for two pieces of ${options.latencyMinSessionSeconds} s`,
      room,
    };
  return { use: true, pieces: Math.min(room.free, byLength, LATENCY_MAX_SESSIONS), room };
}

/**
 * latency: every track's spans cut into pieces of about streamed ÷ pieces. Each span rounds its own
 * count, so the target grows until the call's count is within the pieces (or one per span).
 */
function latencySessions(
  tracks: Track[],
  spans: StreamedSpan[][],
  silences: Silence[][],
  options: ResolvedPlanOptions,
  pieces: number,
  streamed: number,
): { sessions: Omit<PlanSession, 'index'>[]; target: number } {
  const minLength = Math.max(LATENCY_CUT_SILENCE_SECONDS, options.silenceMinSeconds);
  const cuttable = silences.map((list) => list.filter((s) => s.end - s.start >= minLength - 1e-9));
  const bound = Math.max(pieces, spans.flat().length);
  let target = streamed / pieces;
  for (let attempt = 0; ; attempt++) {
    const rule = windowRule(options, target, {
      floor: options.latencyMinSessionSeconds,
      fraction: LATENCY_WINDOW_FRACTION,
    });
    const sessions = tracks.flatMap((track, i) =>
      spans[i]!.flatMap((span) => planLatencySpan(track, span, cuttable[i]!, rule, options)),
    );
    if (sessions.length <= bound || attempt >= 8) return { sessions, target };
    target *= (sessions.length / bound) * 1.02;
  }
}

export interface PlanSessionsInput {
  /** Decoded length of the recording, seconds; floored to the millisecond grid here. */
  durationSeconds: number;
  tracks: Track[];
  /** Silences of each track (same order as `tracks`). */
  silences: Silence[][];
  options?: PlanOptions;
}

/** The sessions of a plan, and what of each track is left out as silence. */
export interface PlannedSessions {
  sessions: PlanSession[];
  options: ResolvedPlanOptions;
  /** The strategy the sessions were cut by (a latency plan asked for may be the throughput plan). */
  strategy: (typeof PLAN_STRATEGIES)[number];
  /** A latency plan asked for: whether it was cut, and why not. */
  latency?: LatencyChoice;
  targetSessionSeconds?: number;
  durationSeconds: number;
  /** Per track (same order as `tracks`): the silent stretches not streamed. */
  skipped: Silence[][];
}

/** The pure planner: from a length, tracks and their silences to sessions. */
export function planSessions(input: PlanSessionsInput): PlannedSessions {
  const parsed = planOptionsSchema.safeParse(input.options ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new MediaError('invalid-option', `plan option ${issue.path.join('.')}: ${issue.message}`);
  }
  const options = parsed.data;
  const durationSeconds = floorToGrid(input.durationSeconds);
  if (!(durationSeconds > 0))
    throw new MediaError('zero-duration', 'nothing to plan: the recording is shorter than 1 ms');
  const sorted = input.tracks.map((_, i) => [...(input.silences[i] ?? [])].sort((a, b) => a.start - b.start));
  const spans = sorted.map((silences) =>
    streamedSpans(durationSeconds, silences, options.skipSilenceSeconds),
  );
  // balanced and latency: the budget is shared by what is streamed, not by the silence left out.
  const streamed = spans.flat().reduce((sum, s) => sum + (s.end - s.start), 0);
  const latency = options.strategy === 'latency' ? latencyChoice(streamed, options) : undefined;
  const strategy = !latency ? options.strategy : latency.use ? 'latency' : options.throughputStrategy;
  const skipped = spans.map((own) => gapsBetween(own, durationSeconds));
  if (options.recognition === 'file') {
    const minSilence = Math.max(FILE_CUT_SILENCE_SECONDS, options.silenceMinSeconds);
    const sessions = input.tracks.flatMap((track, i) => {
      const ranges = cutRanges(sorted[i]!, minSilence);
      return spans[i]!.flatMap((span) =>
        fileSpanPieces(track, span, ranges, { maxSessionSeconds: options.maxSessionSeconds }),
      );
    });
    return {
      sessions: sessions.map((s, index) => ({ index, ...s })),
      options,
      strategy: options.strategy === 'latency' ? options.throughputStrategy : options.strategy,
      durationSeconds,
      skipped,
    };
  }
  if (latency?.use) {
    const cut = latencySessions(input.tracks, spans, sorted, options, latency.pieces, streamed);
    return {
      sessions: cut.sessions.map((s, index) => ({ index, ...s })),
      options,
      strategy,
      latency,
      durationSeconds,
      targetSessionSeconds: toGrid(cut.target),
      skipped,
    };
  }
  const target =
    strategy === 'balanced' ? balancedTargetSeconds(Math.max(streamed, 1 / GRID), 1, options) : undefined;
  const rule = windowRule(options, target);
  const sessions = input.tracks
    .flatMap((track, i) => spans[i]!.flatMap((span) => planSpan(track, span, sorted[i]!, rule)))
    .map((s, index) => ({ index, ...s }));
  return {
    sessions,
    options,
    strategy,
    ...(latency ? { latency } : {}),
    durationSeconds,
    ...(target !== undefined ? { targetSessionSeconds: toGrid(target) } : {}),
    skipped,
  };
}

/** What of [0, duration] the spans leave out. */
function gapsBetween(spans: StreamedSpan[], durationSeconds: number): Silence[] {
  const gaps: Silence[] = [];
  let at = 0;
  for (const s of spans) {
    if (s.start > at) gaps.push({ start: at, end: s.start });
    at = s.end;
  }
  if (durationSeconds > at) gaps.push({ start: at, end: durationSeconds });
  return gaps;
}

/** A latency plan asked for, in words: the pieces it cut, or why the throughput plan was cut instead. */
function latencyDecisions(planned: PlannedSessions): string[] {
  if (planned.options.recognition === 'file') return fileDecisions(planned);
  const { latency } = planned;
  if (!latency) return [];
  if (!latency.use)
    return [`latency plan not used (${latency.reason}): the throughput plan, ${planned.strategy}`];
  const { room } = latency;
  const n = planned.sessions.length;
  return [
    `cut for latency: ${n} session${n === 1 ? '' : 's'} of about ${roundThousandths(planned.targetSessionSeconds ?? 0)} s ` +
      `(${room.free} of ${room.limit} sessions free, none waiting), each cut in a silence of at least ` +
      `${LATENCY_CUT_SILENCE_SECONDS} s`,
  ];
}

/** A file plan, in words: its pieces, and the stretches streamed for want of a silence to cut in. */
function fileDecisions(planned: PlannedSessions): string[] {
  const pieces = planned.sessions.filter((s) => s.recognition === 'file');
  const streamed = planned.sessions.filter((s) => s.recognition !== 'file');
  const seconds = roundThousandths(streamed.reduce((sum, s) => sum + (s.end - s.start), 0));
  return [
    `cut for file recognition: ${pieces.length} piece${pieces.length === 1 ? '' : 's'} of at most ` +
      `${FILE_PIECE_MAX_SECONDS} s, each cut in a silence of at least ${FILE_CUT_SILENCE_SECONDS} s`,
    ...(streamed.length > 0
      ? [
          `${streamed.length} stretch${streamed.length === 1 ? '' : 'es'} (${seconds} s) with no such silence ` +
            `within ${FILE_PIECE_MAX_SECONDS} s: recognized by stream sessions`,
        ]
      : []),
  ];
}

/** What was left out as silence, in words (result.json's `audio.channelAnalysis.decisions`). */
function skipDecisions(tracks: Track[], planned: PlannedSessions, silent: (t: Track) => boolean): string[] {
  if (planned.sessions.length === 0) {
    return [
      'no speech in the recording (every channel is silent): nothing is recognized, the transcript is empty',
    ];
  }
  const min = planned.options.skipSilenceSeconds;
  return tracks.flatMap((t, i) => {
    const skipped = planned.skipped[i] ?? [];
    if (skipped.length === 0) return [];
    const name = `track ${t.track} (${t.speaker})`;
    if (silent(t)) return [`${name} is silent for the whole call: not recognized`];
    const seconds = roundThousandths(skipped.reduce((sum, s) => sum + (s.end - s.start), 0));
    const count = skipped.length === 1 ? '1 silent stretch' : `${skipped.length} silent stretches`;
    return [`${name}: ${count} of at least ${min} s, ${seconds} s in all, not recognized`];
  });
}

/**
 * The recording's length: what the channel analysis decoded, checked against what the probe read of
 * the container's timeline. A probe made before the plan counted the length checked it itself, and
 * its decoded length stands.
 */
function decodedLength(
  probe: ProbeResult,
  analyzedSeconds: number,
): { decodedSeconds: number; lengthCheck?: LengthCheck } {
  if (probe.containerSeconds === undefined) {
    return {
      decodedSeconds: probe.durationSeconds,
      ...(probe.lengthCheck ? { lengthCheck: probe.lengthCheck } : {}),
    };
  }
  if (!(analyzedSeconds > 0))
    throw new MediaError('zero-duration', `${probe.path} holds no audio samples (zero duration)`, probe.path);
  const lengthCheck = checkLength(probe.path, {
    decodedSeconds: analyzedSeconds,
    containerSeconds: probe.containerSeconds,
    measuredBy: probe.amr ? 'amr-frames' : 'packets',
  });
  return { decodedSeconds: analyzedSeconds, lengthCheck };
}

/**
 * Probes' facts + a silence scan → the plan document. With `staging`, the scan's decode also writes the
 * tracks, and each track with sessions is staged whole before the plan returns (staged-tracks.ts): the
 * plan's `stagedTracks` say where.
 */
export async function planRecording(
  probe: ProbeResult,
  options: PlanOptions = {},
  signal?: AbortSignal,
  timeBounds?: MediaTimeBounds,
  staging?: TrackStaging,
): Promise<SessionPlan> {
  const resolved = planOptionsSchema.parse(options);
  const mapped = planTracks(probe.channels, resolved.channels);
  // With staging, the analysis's decode also writes the tracks (staged-tracks.ts), removed once uploaded.
  const files = staging ? await trackFiles(mapped) : undefined;
  try {
    return await planAndStage(probe, resolved, mapped, { signal, timeBounds, staging, files });
  } finally {
    await files?.remove();
  }
}

/** The options a plan was made with, as the plan records them (its strategy's own settings only). */
function optionsRecordOf(planned: PlannedSessions) {
  const o = planned.options;
  return {
    strategy: planned.strategy,
    ...(o.strategy === 'latency'
      ? { requestedStrategy: 'latency' as const, ...(o.room ? { room: o.room } : {}) }
      : {}),
    maxSessionSeconds: o.maxSessionSeconds,
    searchWindowSeconds: o.searchWindowSeconds,
    silenceNoiseDb: o.silenceNoiseDb,
    silenceMinSeconds: o.silenceMinSeconds,
    skipSilenceSeconds: o.skipSilenceSeconds,
    ...(planned.strategy === 'balanced'
      ? {
          budget: o.budget,
          minSessionSeconds: o.minSessionSeconds,
          targetSessionSeconds: planned.targetSessionSeconds,
        }
      : {}),
    ...(planned.strategy === 'latency'
      ? {
          minSessionSeconds: o.latencyMinSessionSeconds,
          targetSessionSeconds: planned.targetSessionSeconds,
        }
      : {}),
    ...(o.recognition === 'file' ? { recognition: 'file' as const } : {}),
  };
}

async function planAndStage(
  probe: ProbeResult,
  resolved: ResolvedPlanOptions,
  mapped: Track[],
  run: { signal?: AbortSignal; timeBounds?: MediaTimeBounds; staging?: TrackStaging; files?: TrackFiles },
): Promise<SessionPlan> {
  // One decode of the whole recording: bounded by its length and size, on the media queue.
  const ms = timeBoundMs({ sizeBytes: probe.sizeBytes, audioSeconds: probe.durationSeconds }, run.timeBounds);
  // One bound for every tool run of the plan (the analysis, and a track transcoded whole after it), so
  // the activity's own timeout, which follows the bound, still never comes first.
  const deadline = Date.now() + ms;
  const bounded = <T>(work: (signal: AbortSignal) => Promise<T>) =>
    withinTimeBound('the channel analysis', probe.path, Math.max(1, deadline - Date.now()), run.signal, work);
  const open = (signal: AbortSignal) => openInput(probe.path, probe.reader, probe.streamIndex, { signal });
  const analysis = await bounded(async (signal) =>
    analyzeChannels(await open(signal), {
      channels: probe.channels,
      noiseDb: resolved.silenceNoiseDb,
      minSilenceSeconds: resolved.silenceMinSeconds,
      durationSeconds: probe.durationSeconds,
      ...(run.files ? { trackOutputs: run.files.outputs } : {}),
      signal,
    }),
  );
  const { decodedSeconds, lengthCheck } = decodedLength(probe, analysis.decodedSeconds);
  const perChannel = analysis.silences;
  const { tracks, decisions } = applyChannelAnalysis(mapped, analysis.channels, resolved.channels);
  const status = new Map(analysis.channels.map((f) => [f.channel, f.status]));
  const silentTrack = (t: Track) =>
    resolved.channels.detect !== false && t.sourceChannels.every((c) => status.get(c) === 'silent');
  // A track the analysis found silent is one silence, however its hiss or clicks split it.
  const silences = tracks.map((t) =>
    silentTrack(t)
      ? [{ start: 0, end: decodedSeconds }]
      : intersectSilences(t.sourceChannels.map((c) => perChannel[c] ?? [])),
  );
  const planned = planSessions({
    durationSeconds: decodedSeconds,
    tracks,
    silences,
    options: resolved,
  });
  decisions.push(...latencyDecisions(planned), ...skipDecisions(tracks, planned, silentTrack));
  const stagedTracks =
    run.staging && run.files
      ? await stageTracks(
          {
            files: run.files,
            tracks,
            sessions: planned.sessions,
            durationSeconds: planned.durationSeconds,
            fingerprint: probe.fingerprint,
            openInput: open,
            bounded,
          },
          run.staging,
        )
      : undefined;
  return sessionPlanSchema.parse({
    version: 1,
    source: {
      path: probe.path,
      fingerprint: probe.fingerprint,
      sampleRate: probe.sampleRate,
      channels: probe.channels,
      durationSeconds: planned.durationSeconds,
      decodedSeconds: roundSecondsToMs(decodedSeconds),
      streamIndex: probe.streamIndex,
    },
    options: optionsRecordOf(planned),
    tracks,
    sessions: planned.sessions,
    channels: analysis.channels,
    decisions,
    ...(lengthCheck ? { lengthCheck } : {}),
    ...(stagedTracks ? { stagedTracks } : {}),
  });
}
