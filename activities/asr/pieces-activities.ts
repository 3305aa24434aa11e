/**
 * Recognition of a group of pieces by file requests (task queue `callpipe-asr`; schemas/recognition.ts):
 * one multipart request per piece of at most 58 s, unpaced, several at once. A call's pieces go through a
 * few of these activities (one per group: workflows/recognize-stage.ts), not one per piece, so a call
 * costs no more Temporal actions and history events than its streams would.
 *
 * - Sessions of the account: the activity's own slot (a lease when the account's budget is shared)
 *   carries one request; each further request in flight holds a lease of its own from the account's
 *   session budget (workers/session-budget-client.ts), taken while pieces wait and given back at once, so
 *   in-flight file requests count against the same concurrent sessions as streams (spec 02: `550 No
 *   Resource` applies to both).
 * - Errors, through the retry table: 550 waits its row's delay, 552/600/651, 5xx and timeouts retry
 *   the piece after the restart loop's wait, each within the piece's retry budget
 *   (`RETRY_LOOPS.FilePieceRetry`); a piece the service refuses as invalid (`413`, `652`: the plan made a
 *   piece it does not take) fails the activity, and so the call, non-retryably with that reason.
 * - A retried attempt (a crash, a lost worker) resumes after the pieces already recognized: each
 *   finished piece's result is kept in the group's progress object as it comes (writes serialized, a
 *   newer one carrying all; none after the last piece, whose result follows), read back only by a
 *   retried attempt; heartbeats carry counts only.
 * - Neighbouring pieces' audio comes from one ranged read of the track (a group's run of pieces is
 *   usually one GET), taken by the first piece that needs it and let go when the last has its audio.
 *
 * The group's result (every piece's, in the shape of a session's) is written to `resultKey` last; a
 * retried attempt that finds one returns it as is.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from '@temporalio/activity';
import { isServiceError } from '../../service/index.ts';
import type { TemporaryWord } from '../../schemas/service-asr.ts';
import { partialResultKey } from '../../schemas/call-keys.ts';
import { sessionByteRange } from '../../schemas/media-transcode.ts';
import { FAILURE, loopDelayMs, loopRetries, retryDelayMs } from '../../schemas/retry-table.ts';
import { roundSecondsToMs } from '../../schemas/units.ts';
import { activityContext } from '../activity-context.ts';
import { classifyFailure } from '../failure-classifier.ts';
import { failureOf } from '../failure.ts';
import { metrics } from '../metrics.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { recordFileRequest } from './file-rate.ts';
import { heartbeatIntervalMs } from './heartbeat-interval.ts';
import { recognitionOptionsFor, unbracketFillers } from './recognition-options.ts';
import { RESULT_WRITE_BUDGET_MS, writeWithinBudget } from './session-result.ts';
import { describeError } from './session-run.ts';
import type { AsrActivityDeps, SessionResult } from './session-types.ts';
import {
  piecesResultSchema,
  type PieceRef,
  type PiecesHeartbeat,
  type PiecesResult,
  type RecognizePiecesInput,
  type RecognizePiecesOutput,
} from './piece-types.ts';

/** A piece's audio, in seconds. */
const seconds = (piece: PieceRef) => piece.end - piece.start;

/** Leases on the account's sessions (the asr worker's session budget; a fake in tests). */
export interface PieceLeases {
  /** Up to `count` leases from the account's free room, answered at once (none when it is full). */
  takeFree(count: number): Promise<string[]>;
  release(id: string): void;
  /**
   * Runs a piece of `seconds` of audio (its audio read and its request) when one of the process's
   * sessions is free, the longest waiting piece first (workers/local-piece-leases.ts); without it a
   * piece goes at once.
   */
  inTurn?<T>(send: () => Promise<T>, seconds: number): Promise<T>;
}

export interface PiecesDeps extends Pick<AsrActivityDeps, 'service' | 'store' | 'model' | 'random'> {
  /**
   * Leases for the requests beyond the activity's own slot: the account's session budget when its limit
   * is shared by several worker processes, else a count of the process's own
   * (workers/local-piece-leases.ts). None: one request at a time.
   */
  leases?: PieceLeases | undefined;
  /** Requests in flight per activity at most (default 1: the activity's own slot). */
  maxInFlight?: number | undefined;
  /** How long the group's result write is retried; default the retry table's. */
  resultWriteBudgetMs?: number;
  /** Replaces the retry loop's waits (tests). */
  retryDelayMs?: number;
}

/** One attempt's state, shared by its runners. */
interface PiecesRun {
  readonly input: RecognizePiecesInput;
  readonly deps: PiecesDeps;
  readonly ctx: Context | undefined;
  readonly words: TemporaryWord[] | undefined;
  /** Finished pieces by session (earlier attempts' included). */
  readonly done: Map<number, SessionResult>;
  /** Pieces still to send, longest first. */
  readonly queue: PieceRef[];
  /** The track's audio of each piece to send, by session: ranged reads shared by neighbouring pieces. */
  readonly reads: Map<number, SharedRead>;
  /** The runners (the first on the activity's own slot), those running, and a lease ask under way. */
  readonly runners: Promise<void>[];
  /** The process's runs of these activities (this one included), to hand a lease its runner is done with. */
  readonly neighbours: Set<PiecesRun>;
  running: number;
  asking: Promise<void> | undefined;
  /** Pieces recognized by this attempt (asks for more leases go at 1, 2, 4, 8… of them). */
  sent: number;
  inFlight: number;
  /** The write of the progress last queued (never rejects), and whether a newer one is due. */
  lastWrite: Promise<void>;
  writeQueued: boolean;
}

export function createPiecesActivities(
  deps: PiecesDeps,
  words: (key: string | undefined) => Promise<TemporaryWord[] | undefined>,
) {
  const runs = new Set<PiecesRun>();
  async function recognizePieces(input: RecognizePiecesInput): Promise<RecognizePiecesOutput> {
    // Only a retried attempt can find its group's result (its predecessor wrote it and was lost): a
    // first one looks nothing up, as a stream session's does not.
    const retried = (activityContext()?.info.attempt ?? 1) > 1;
    const existing = retried ? await readResult(deps.store, input.resultKey) : undefined;
    if (existing) return outputOf(input, existing, true);
    const run = await startRun(deps, input, await words(input.wordsKey), runs);
    const beat = setInterval(() => heartbeat(run), heartbeatIntervalMs(run.ctx?.info.heartbeatTimeoutMs));
    runs.add(run);
    try {
      await recognizeAll(run);
    } finally {
      runs.delete(run);
      clearInterval(beat);
      await run.lastWrite;
    }
    const result: PiecesResult = {
      version: 1,
      pieces: input.pieces.map((p) => run.done.get(p.session)!),
    };
    await writeWithinBudget(deps.store, input.resultKey, JSON.stringify(result), {
      budgetMs: deps.resultWriteBudgetMs ?? RESULT_WRITE_BUDGET_MS,
      what: `pieces group ${input.group}`,
      signal: run.ctx?.cancellationSignal,
      onWait: () => heartbeat(run),
    });
    return outputOf(input, result, false);
  }
  return { recognizePieces };
}

async function readResult(store: ObjectStore, key: string): Promise<PiecesResult | undefined> {
  const found = await store.read(key);
  if (!found) return undefined;
  const parsed = piecesResultSchema.safeParse(JSON.parse(found.body.toString('utf8')));
  return parsed.success ? parsed.data : undefined;
}

function outputOf(input: RecognizePiecesInput, result: PiecesResult, reused: boolean): RecognizePiecesOutput {
  return {
    resultKey: input.resultKey,
    reused,
    pieces: result.pieces.map((p) => ({
      session: p.session,
      utterances: p.utterances.length,
      requests: reused ? 0 : p.requests,
      retries: p.restarts,
      audioSecondsSent: reused ? 0 : p.audioSecondsSent,
    })),
  };
}

/** A retried attempt starts after the pieces its predecessors kept; a first one looks nothing up. */
async function startRun(
  deps: PiecesDeps,
  input: RecognizePiecesInput,
  words: TemporaryWord[] | undefined,
  neighbours: Set<PiecesRun>,
): Promise<PiecesRun> {
  const ctx = activityContext();
  const done = new Map<number, SessionResult>();
  if ((ctx?.info.attempt ?? 1) > 1) {
    const kept = await readResult(deps.store, partialResultKey(input.resultKey)).catch(() => undefined);
    const wanted = new Map(input.pieces.map((p) => [p.session, p]));
    for (const p of kept?.pieces ?? []) {
      const piece = wanted.get(p.session);
      if (piece && piece.start === p.start && piece.end === p.end) done.set(p.session, p);
    }
    if (done.size > 0)
      ctx?.log.info('resuming pieces after a failed attempt', {
        done: done.size,
        pieces: input.pieces.length,
      });
  }
  const queue = input.pieces
    .filter((p) => !done.has(p.session))
    .sort((a, b) => seconds(b) - seconds(a) || a.session - b.session);
  return {
    input,
    deps,
    ctx,
    words,
    done,
    queue,
    reads: sharedReads(queue),
    runners: [],
    neighbours,
    running: 0,
    asking: undefined,
    sent: 0,
    inFlight: 0,
    lastWrite: Promise.resolve(),
    writeQueued: false,
  };
}

function heartbeat(run: PiecesRun): void {
  run.ctx?.heartbeat({
    done: run.done.size,
    inFlight: run.inFlight,
    pieces: run.input.pieces.length,
  } satisfies PiecesHeartbeat);
}

/**
 * Every queued piece, by runners that each take the next longest: one on the activity's own slot and,
 * up to `maxInFlight`, one per lease of free room, asked for at the start and again after 1, 2, 4, 8…
 * pieces (free room appears as other calls end): from the account's budget, a handful of updates per
 * group and never a wait in the budget (no timer), so a call's pieces cost no more Temporal actions than
 * its streams; the process's own count grants every ask at once. As its runner runs out of pieces, a
 * lease goes to another of the process's calls with pieces waiting, else back. The first failure empties
 * the queue: the runners stop after their piece in flight.
 */
async function recognizeAll(run: PiecesRun): Promise<void> {
  startRunner(run);
  if (run.deps.leases) askForLeases(run);
  await run.runners[0]!.catch(() => undefined);
  // The queue is empty (or a piece failed): no runner starts after the ask under way is answered.
  await run.asking;
  const outcomes = await Promise.allSettled(run.runners);
  const failed = outcomes.find((o) => o.status === 'rejected');
  if (failed) throw failed.reason;
}

const maxInFlight = (run: PiecesRun) => Math.max(1, run.deps.maxInFlight ?? 1);

function startRunner(run: PiecesRun, lease?: string): void {
  run.running += 1;
  const done = runner(run).finally(() => {
    run.running -= 1;
    if (lease) handOver(run, lease);
  });
  // The first runner's failure is the activity's; the others' are read when all have settled.
  done.catch(() => undefined);
  run.runners.push(done);
}

/**
 * A lease whose runner ran out of pieces starts a runner of the process's run with the longest waiting
 * piece and room for one more, else goes back: room the process holds is not given back (nor left idle
 * until the waiting run's next ask, after 2, 4, 8… of its own pieces) while pieces of its other calls
 * wait, and handing it over costs no update of the budget. A run whose queue is empty takes none, so no
 * runner starts after its activity has stopped waiting for its runners.
 */
function handOver(from: PiecesRun, lease: string): void {
  let to: PiecesRun | undefined;
  for (const r of from.neighbours) {
    if (r.queue.length === 0 || r.running >= maxInFlight(r)) continue;
    if (!to || seconds(r.queue[0]!) > seconds(to.queue[0]!)) to = r;
  }
  if (to) startRunner(to, lease);
  else from.deps.leases!.release(lease);
}

/** Asks the budget's free room for a runner per waiting piece (one ask at a time); each granted one starts. */
function askForLeases(run: PiecesRun): void {
  const leases = run.deps.leases!;
  const want = Math.min(run.queue.length, maxInFlight(run) - run.running);
  if (run.asking || want <= 0) return;
  run.asking = leases
    .takeFree(want)
    .then((granted) => {
      for (const lease of granted) {
        if (run.queue.length > 0) startRunner(run, lease);
        else leases.release(lease);
      }
    })
    .catch(() => undefined)
    .finally(() => {
      run.asking = undefined;
    });
}

/** Takes pieces until none is left; a piece that fails for good empties the queue for every runner. */
async function runner(run: PiecesRun): Promise<void> {
  for (let piece = run.queue.shift(); piece; piece = run.queue.shift()) {
    run.inFlight += 1;
    const leases = run.deps.leases;
    const current = piece;
    try {
      const recognized = leases?.inTurn
        ? await leases.inTurn(() => recognizePiece(run, current), seconds(current))
        : await recognizePiece(run, current);
      run.done.set(piece.session, recognized);
    } catch (err) {
      run.queue.length = 0;
      throw err;
    } finally {
      run.inFlight -= 1;
    }
    keepProgress(run);
    run.sent += 1;
    if (leases && (run.sent & (run.sent - 1)) === 0) askForLeases(run);
  }
}

/** One piece, retried through the retry table until it is recognized or fails for good. */
async function recognizePiece(run: PiecesRun, piece: PieceRef): Promise<SessionResult> {
  const { input, deps } = run;
  const audio = await audioOf(run, piece);
  const model = input.model ?? deps.model;
  const reasons: string[] = [];
  let requests = 0;
  let audioSent = 0;
  for (let retries = 0; ; retries++) {
    const began = performance.now();
    try {
      const out = await deps.service.recognizeFile({
        audio,
        model: input.model,
        options: recognitionOptionsFor(model),
        ...(run.words ? { words: run.words } : {}),
        startOffsetSeconds: piece.start,
        signal: run.ctx?.cancellationSignal,
      });
      requests += out.cost.requests;
      audioSent += out.audioSeconds;
      metrics.requestsOk('asr/file');
      metrics.fileAudio(out.audioSeconds);
      recordFileRequest(model, out.audioSeconds, performance.now() - began);
      return {
        session: piece.session,
        start: piece.start,
        end: piece.end,
        utterances: out.results.map((u) => ({
          start: u.startSeconds,
          end: u.endSeconds,
          text: unbracketFillers(u.text),
          ...(u.score !== undefined ? { score: u.score } : {}),
        })),
        audioSecondsSent: roundSecondsToMs(audioSent),
        restarts: retries,
        reStreamedSeconds: 0,
        requests,
        restartReasons: reasons,
      };
    } catch (err) {
      metrics.requestFailed('asr/file', err);
      if (isServiceError(err)) requests += err.cost?.requests ?? 1;
      audioSent += seconds(piece);
      metrics.fileAudio(seconds(piece));
      await afterPieceError(run, piece, err, retries + 1);
      reasons.push(describeError(err));
    }
  }
}

/** Bytes [start, end] (inclusive) of an object, in one ranged GET. */
async function readRange(store: ObjectStore, key: string, start: number, end: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.getStream(key, { start, end })) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Neighbouring pieces share one read: a new one starts where the silence skipped before a piece is longer
 * than {@link READ_GAP_SECONDS} or the read would pass {@link READ_MAX_BYTES}.
 */
const READ_GAP_SECONDS = 60;
const READ_MAX_BYTES = 16 * 1024 * 1024;

/** One ranged read of the track for some of the group's pieces: made when the first needs it. */
interface SharedRead {
  start: number;
  end: number;
  /** Pieces that have not taken their audio yet: at none, the bytes are let go. */
  waiting: number;
  bytes?: Promise<Buffer>;
}

/** The reads of `pieces` (any order), by session: a group's pieces cost a GET or a few, not one each. */
function sharedReads(pieces: readonly PieceRef[]): Map<number, SharedRead> {
  const bySession = new Map<number, SharedRead>();
  let read: SharedRead | undefined;
  for (const piece of [...pieces].sort((a, b) => a.start - b.start)) {
    const range = sessionByteRange({ ...piece, audioStart: 0 });
    const gap = range.start - (read?.end ?? 0);
    const joins =
      read !== undefined &&
      gap <= sessionByteRange({ start: 0, end: READ_GAP_SECONDS }).end &&
      range.end - read.start <= READ_MAX_BYTES;
    if (!joins) read = { start: range.start, end: range.end, waiting: 0 };
    read!.end = range.end;
    read!.waiting += 1;
    bySession.set(piece.session, read!);
  }
  return bySession;
}

/** A piece's audio, from its shared read (made by the first piece that needs it). */
async function audioOf(run: PiecesRun, piece: PieceRef): Promise<Buffer> {
  const read = run.reads.get(piece.session)!;
  const bytes = (read.bytes ??= readRange(run.deps.store, run.input.audioKey, read.start, read.end - 1));
  read.waiting -= 1;
  if (read.waiting === 0) delete read.bytes;
  const range = sessionByteRange({ ...piece, audioStart: 0 });
  return (await bytes).subarray(range.start - read.start, range.end - read.start);
}

/** Returns when the piece should be sent again (after the row's wait); throws when it should not. */
async function afterPieceError(run: PiecesRun, piece: PieceRef, err: unknown, retry: number): Promise<void> {
  const what = `piece ${piece.session} (${piece.start}–${piece.end} s)`;
  if (run.ctx?.cancellationSignal.aborted) throw err;
  const type = classifyFailure(err);
  if (!loopRetries('FilePieceRetry', type)) {
    // 413/652 (the plan made a piece the service refuses), credentials, quota: never loop on it.
    throw failureOf(type ?? FAILURE.RecognitionFailed, `${what}: ${describeError(err)}`);
  }
  if (retry > run.input.maxRetries) {
    throw failureOf(
      FAILURE.RecognitionRestartsExhausted,
      `${what}: gave up after ${retry - 1} retries; last error: ${describeError(err)}`,
    );
  }
  const random = run.deps.random ?? Math.random;
  const hint = isServiceError(err) ? err.retryAfterMs : undefined;
  const delay =
    run.deps.retryDelayMs ??
    (type === FAILURE.ServiceNoResource
      ? (retryDelayMs(FAILURE.ServiceNoResource, retry, random, hint) ?? 0)
      : loopDelayMs('FilePieceRetry', retry, random, hint));
  if (type === FAILURE.ServiceNoResource) metrics.noResourceWait();
  else metrics.restarted();
  run.ctx?.log.warn('a file recognition request failed; sending the piece again', {
    piece: piece.session,
    retry,
    delayMs: delay,
    reason: describeError(err),
  });
  await sleep(delay, undefined, { signal: run.ctx?.cancellationSignal });
}

/**
 * Keeps the finished pieces in the group's progress object for a retried attempt: one write at a time,
 * the next taking every piece finished by then. A failed write costs only pieces recognized again.
 */
function keepProgress(run: PiecesRun): void {
  // Every piece done: the group's result is written next, and no attempt will read the progress.
  if (run.writeQueued || run.done.size === run.input.pieces.length) return;
  run.writeQueued = true;
  run.lastWrite = run.lastWrite.then(async () => {
    run.writeQueued = false;
    // Checked again when the write's turn comes: the last piece may have finished while an earlier write ran.
    if (run.done.size === run.input.pieces.length) return;
    const body: PiecesResult = { version: 1, pieces: [...run.done.values()] };
    try {
      await run.deps.store.put(partialResultKey(run.input.resultKey), JSON.stringify(body), {
        contentType: 'application/json',
      });
    } catch (err) {
      run.ctx?.log.warn('could not keep the pieces recognized so far; the next write will', {
        reason: describeError(err),
      });
    }
  });
}
