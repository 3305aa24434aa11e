/**
 * The file plan of one streamed span of a track (schemas/recognition.ts, `file`): pieces of at most
 * {@link FILE_PIECE_MAX_SECONDS}, each cut only in a silence of at least {@link FILE_CUT_SILENCE_SECONDS}
 * and at least half of it from speech on either side (the latency plan's gaps), in the middle of the
 * silence where the piece's limit allows, else as late in it as the limit allows, always on the span's
 * 240-ms request grid (see {@link REQUEST_MS}). A stretch with no such
 * silence within a piece's length (music on hold, continuous speech) is never cut blindly: it becomes one
 * stream session up to the next silence it can be cut in (split at the stream limit like any session).
 *
 * Pure: the caller (plan.ts) gives the span, the track's silences sorted by start, and the limits.
 */
import type { PlanSession, Silence, Track } from '../../schemas/plan.ts';
import type { StreamedSpan } from './plan.ts';
import { FILE_CUT_SILENCE_SECONDS, FILE_PIECE_MAX_SECONDS } from '../../schemas/recognition.ts';

const GRID = 1000;
const ceilGrid = (s: number) => Math.ceil(s * GRID - 1e-6) / GRID;
const floorGrid = (s: number) => Math.floor(s * GRID + 1e-6) / GRID;
const toGrid = (s: number) => Math.round(s * GRID) / GRID;

/** Where a cut may go in one silence: [from, to], half the shortest cut silence away from speech. */
interface CutRange {
  from: number;
  to: number;
  silence: Silence;
}

/** The ranges a cut may go in, in time order: silences long enough, less their margins. */
export function cutRanges(sorted: Silence[], minSilence = FILE_CUT_SILENCE_SECONDS): CutRange[] {
  const margin = FILE_CUT_SILENCE_SECONDS / 2;
  return sorted
    .filter((s) => s.end - s.start >= minSilence - 1e-9)
    .map((s) => ({ from: ceilGrid(s.start + margin), to: floorGrid(s.end - margin), silence: s }))
    .filter((r) => r.to >= r.from);
}

type Piece = Omit<PlanSession, 'index'>;

export interface FileSpanLimits {
  /** Longest piece (default {@link FILE_PIECE_MAX_SECONDS}). */
  pieceSeconds?: number;
  /** Longest stream session, for a stretch that cannot be cut. */
  maxSessionSeconds: number;
}

/**
 * Cuts go on the span's request grid: whole multiples of {@link REQUEST_SECONDS} from its start. A stream
 * session of the span starts there too and the service frames audio from a request's start, so a piece
 * hears its audio framed exactly as the stream would: the same utterances at the same times (a resumed
 * stream keeps that grid for the same reason: activities/asr/stream-from-resume.ts).
 */
const REQUEST_MS = 240;

/**
 * The request-grid point of [lo, hi] nearest `want` (all seconds, grid from `base`, the span's start), or
 * undefined when none: where every cut of a span goes, a piece's or a stream session's (plan.ts).
 */
export function gridPointIn(base: number, lo: number, hi: number, want: number): number | undefined {
  const b = Math.round(base * GRID);
  const first = Math.ceil((Math.round(lo * GRID) - b) / REQUEST_MS);
  const last = Math.floor((Math.round(hi * GRID) - b) / REQUEST_MS);
  if (first > last) return undefined;
  const k = Math.min(last, Math.max(first, Math.round((Math.round(want * GRID) - b) / REQUEST_MS)));
  return (b + k * REQUEST_MS) / GRID;
}

/**
 * The last cut at or before `limit` after `start`: the grid point nearest the middle of the last usable
 * silence that holds one, else its latest under the limit.
 */
function lastCutBefore(
  ranges: CutRange[],
  base: number,
  start: number,
  limit: number,
): { cut: number; range: CutRange } | undefined {
  for (let i = ranges.length - 1; i >= 0; i--) {
    const r = ranges[i]!;
    if (r.from > limit) continue;
    if (r.to <= start) return undefined;
    const mid = (r.silence.start + r.silence.end) / 2;
    const cut = gridPointIn(base, Math.max(r.from, start + 1 / GRID), Math.min(r.to, limit), mid);
    if (cut !== undefined) return { cut, range: r };
  }
  return undefined;
}

/** The first cut after `after` (a stream stretch ends there): in the next usable silence holding a grid point. */
function firstCutAfter(
  ranges: CutRange[],
  base: number,
  after: number,
): { cut: number; range: CutRange } | undefined {
  for (const r of ranges) {
    if (r.to <= after) continue;
    const mid = (r.silence.start + r.silence.end) / 2;
    const cut = gridPointIn(base, Math.max(r.from, after + 1 / GRID), r.to, mid);
    if (cut !== undefined) return { cut, range: r };
  }
  return undefined;
}

/** The pieces and stream sessions of one span, in time order. */
export function fileSpanPieces(
  track: Track,
  span: StreamedSpan,
  ranges: CutRange[],
  limits: FileSpanLimits,
): Piece[] {
  const max = limits.pieceSeconds ?? FILE_PIECE_MAX_SECONDS;
  const base = { track: track.track, channel: track.channel, speaker: track.speaker };
  const last = span.after
    ? { cut: 'silence' as const, silence: { ...span.after } }
    : { cut: 'end' as const, silence: null };
  const out: Piece[] = [];
  let start = span.start;
  while (start < span.end) {
    if (span.end - start <= max + 1e-9) {
      out.push({ ...base, start, end: span.end, recognition: 'file', ...last });
      break;
    }
    // On the millisecond grid, so that no piece is longer than `max` by a float's error.
    const found = lastCutBefore(ranges, span.start, start, floorGrid(start + max));
    if (found) {
      out.push({
        ...base,
        start,
        end: found.cut,
        recognition: 'file',
        cut: 'silence',
        silence: { ...found.range.silence },
      });
      start = found.cut;
      continue;
    }
    // No silence to cut in within a piece: stream up to the next one (or the span's end).
    const next = firstCutAfter(ranges, span.start, start + max);
    const end = next && next.cut < span.end ? next.cut : span.end;
    for (let at = start; at < end;) {
      const to = Math.min(end, toGrid(at + limits.maxSessionSeconds));
      const final = to >= end;
      out.push({
        ...base,
        start: at,
        end: to,
        recognition: 'stream',
        ...(final
          ? next && next.cut < span.end
            ? { cut: 'silence' as const, silence: { ...next.range.silence } }
            : last
          : { cut: 'hard' as const, silence: null }),
      });
      at = to;
    }
    start = end;
  }
  return out;
}
