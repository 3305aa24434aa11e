/**
 * sessionBudget: one account's concurrent recognition sessions, shared by every asr worker process.
 * The service counts open sessions per account and answers `550 No Resource` beyond
 * its limit; each worker's own cap (`CALLPIPE_ASR_CONCURRENT_SESSIONS`) cannot know what the others
 * hold, so the account's limit lives here, in one long-running workflow per account, and a worker opens
 * a session only under a lease from it.
 *
 * - `acquireSessions` (update) asks for leases by ids the worker chose, all its slots waiting at once in
 *   one request (a worker has one update in flight, however many slots it fills: the server admits few
 *   updates in flight per workflow). Ids are granted at once while the account has room, else they wait
 *   in line (first come, first served across workers); the handler answers when one of them is granted,
 *   or after `waitMs` with none, and the worker asks again with the ids still wanted (a lost answer costs
 *   nothing: a granted id is answered again). Ids the worker gave up (`cancel`) leave the line, or give
 *   their lease back when granted meanwhile: one ordered stream per worker, so nothing given up is granted
 *   after.
 * - `acquireSessions` with `ifFree` takes only free room: ids are granted at once while the account is
 *   under its limit and nobody waits in line, the rest are refused at once; it never joins the line and
 *   never waits (no timer). A group of file pieces asks so for the requests beyond its own slot
 *   (activities/asr/pieces-activities.ts): one update per ask, and the activities waiting in line for a
 *   slot keep their turn.
 * - `release` (signal) gives leases back, or everything a worker holds (`all`: its shutdown).
 * - `renew` (signal) is a worker's heartbeat: every lease and request of a worker not heard of for
 *   `leaseTtlMs` is dropped, so a SIGKILLed worker's slots come back by themselves.
 * - Recognition liveness: a renew also says which activities the worker started and ended since its
 *   last one (workers/running-activities.ts). The activities of a worker not heard of for `leaseTtlMs`
 *   are failed by id (`failLostSessions`, activities/asr/liveness-activities.ts) and Temporal retries
 *   them elsewhere at once, so a session's heartbeat timeout can be long (few billed heartbeats) and is
 *   only the fallback. A live worker cut off from the budget that long has its attempts failed too: each
 *   learns of it at its next heartbeat and stops, so a session is streamed twice for at most one
 *   heartbeat interval (activities/asr/session-run.ts) after the worker reaches Temporal again.
 * - The limit is the one the latest request carried: every asr worker of the account is configured alike
 *   (`CALLPIPE_ASR_ACCOUNT_SESSIONS`), and a changed setting takes effect as workers restart. A lowered
 *   limit takes back nothing already granted: new leases wait until the count is under it.
 *
 * Longest-first dispatch is not this workflow's concern: a worker takes a lease *before* it polls its
 * task queue (workers/session-slots.ts), so the tasks wait in the queue, which hands out the longest
 * sessions first (workflows/session-priority.ts), and only as many polls are open as leases are held.
 *
 * History stays small: the run continues as new when the server suggests it or past
 * `maxHistoryEvents`, carrying leases, the line and the workers' last heartbeats.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { LivenessActivities } from '../activities/asr/liveness-activities.ts';
import { runningKey, type RunningActivity } from '../schemas/running-activity.ts';
import { RETRY_POLICIES } from './activity-policies.ts';
import { declareVersioning } from './versioning-behavior.ts';

interface SessionLease {
  id: string;
  holder: string;
  /** Workflow time (epoch ms) of the grant. */
  grantedAt: number;
}

interface SessionRequest {
  id: string;
  holder: string;
  /** Workflow time (epoch ms) the request joined the line. */
  since: number;
}

/** What one run hands the next (continue-as-new). */
interface SessionBudgetState {
  limit: number;
  leaseTtlMs: number;
  leases: SessionLease[];
  waiting: SessionRequest[];
  /** Worker → workflow time (epoch ms) it was last heard of. */
  holders: Record<string, number>;
  /** Most leases held at once, and leases granted, since the budget first started. */
  peak: number;
  grants: number;
  /** Leases taken back from workers that stopped renewing. */
  expired: number;
  /** Worker → the activities it runs, as its renews said (absent in states of before liveness). */
  running?: Record<string, RunningActivity[]>;
  /** Activities of lost workers still to be failed, and how many were handed to be failed so far. */
  reaping?: RunningActivity[];
  reaped?: number;
  /** Runs before this one (continue-as-new). */
  run: number;
}

export interface SessionBudgetInput {
  limit: number;
  leaseTtlMs: number;
  /** Continue as new past this many history events (default {@link MAX_HISTORY_EVENTS}). */
  maxHistoryEvents?: number;
  state?: SessionBudgetState;
}

export interface AcquireRequest {
  /** The worker process asking (host, pid and a random part: workers/session-budget-client.ts). */
  holder: string;
  /** Leases wanted, by ids the worker chose; asking again with an id asks for the same lease. */
  ids: string[];
  /** Ids no longer wanted (a slot reservation abandoned): out of line, or given back if granted. */
  cancel?: string[];
  /** The account's limit as this worker is configured. */
  limit: number;
  /** Longest the handler waits for a grant before answering with none. */
  waitMs: number;
  /** Only free room, answered at once: never in line, never waiting (see the file's comment). */
  ifFree?: boolean;
}

export interface AcquireResult {
  /** The asked ids that hold a lease. */
  granted: string[];
  /** Leases held now and requests waiting, for the worker's log. */
  leased: number;
  waiting: number;
}

export interface ReleaseRequest {
  holder: string;
  ids?: string[];
  /** Everything the holder holds or waits for (a worker shutting down). */
  all?: boolean;
}

/** A worker's heartbeat, with what it started and ended since the last one that reached the budget. */
export interface RenewRequest {
  holder: string;
  started?: RunningActivity[];
  ended?: RunningActivity[];
}

export interface SessionBudgetView {
  limit: number;
  leased: number;
  /** Leases per worker (host:pid:…), for operators and tests. */
  leasedBy: Record<string, number>;
  waiting: number;
  holders: number;
  peak: number;
  grants: number;
  expired: number;
  /** Activities the workers said they run, and those of lost workers handed to be failed. */
  running: number;
  reaped: number;
  run: number;
}

export const acquireSessionsUpdate = defineUpdate<AcquireResult, [AcquireRequest]>('acquireSessions');
export const releaseSessionsSignal = defineSignal<[ReleaseRequest]>('releaseSessions');
export const renewSessionsSignal = defineSignal<[RenewRequest]>('renewSessions');
export const sessionBudgetQuery = defineQuery<SessionBudgetView>('sessionBudget');

/** A run's history bound: well under Temporal's 51,200 events, and cheap to replay. */
const MAX_HISTORY_EVENTS = 5000;

type Owned = { id: string; holder: string };

function initialState(input: SessionBudgetInput): SessionBudgetState {
  return {
    limit: input.limit,
    leaseTtlMs: input.leaseTtlMs,
    leases: [],
    waiting: [],
    holders: {},
    peak: 0,
    grants: 0,
    expired: 0,
    run: 0,
  };
}

const isLeased = (state: SessionBudgetState, id: string) => state.leases.some((l) => l.id === id);
const isQueued = (state: SessionBudgetState, id: string) => state.waiting.some((w) => w.id === id);

/** Takes the leases and requests `match` picks out of the budget (given back, or out of line). */
function dropOwned(state: SessionBudgetState, match: (x: Owned) => boolean): void {
  state.leases = state.leases.filter((l) => !match(l));
  state.waiting = state.waiting.filter((w) => !match(w));
}

/** First in line first, while the account has room. */
function grantWaiting(state: SessionBudgetState): void {
  while (state.leases.length < state.limit && state.waiting.length > 0) {
    const next = state.waiting.shift()!;
    state.leases.push({ id: next.id, holder: next.holder, grantedAt: Date.now() });
    state.grants += 1;
  }
  state.peak = Math.max(state.peak, state.leases.length);
}

/** Drops what workers not heard of for a lease's life hold or wait for. */
function expireSilentHolders(state: SessionBudgetState): void {
  const now = Date.now();
  const gone = new Set(
    Object.entries(state.holders)
      .filter(([, seen]) => now - seen > state.leaseTtlMs)
      .map(([holder]) => holder),
  );
  if (gone.size === 0) return;
  const before = state.leases.length;
  dropOwned(state, (x) => gone.has(x.holder));
  state.expired += before - state.leases.length;
  for (const holder of gone) {
    delete state.holders[holder];
    const lost = state.running?.[holder];
    if (!lost) continue;
    delete state.running![holder];
    (state.reaping ??= []).push(...lost);
    state.reaped = (state.reaped ?? 0) + lost.length;
  }
}

/** What a renew says its worker ended and started since its last one (idempotent: a renew may repeat). */
function trackRunning(state: SessionBudgetState, request: RenewRequest): void {
  if (!request.started?.length && !request.ended?.length) return;
  const running = (state.running ??= {});
  const ended = new Set((request.ended ?? []).map(runningKey));
  const kept = (running[request.holder] ?? []).filter((a) => !ended.has(runningKey(a)));
  const known = new Set(kept.map(runningKey));
  for (const a of request.started ?? []) {
    const key = runningKey(a);
    if (ended.has(key) || known.has(key)) continue;
    kept.push(a);
    known.add(key);
  }
  if (kept.length > 0) running[request.holder] = kept;
  else delete running[request.holder];
}

function markSeen(state: SessionBudgetState, holder: string): void {
  state.holders[holder] = Date.now();
}

/** Expiry first, so leases of silent workers are free for the line. */
function expireAndGrant(state: SessionBudgetState): void {
  expireSilentHolders(state);
  grantWaiting(state);
}

function validateAcquire(request: AcquireRequest): void {
  if (!request.holder) throw new Error('a request names its holder');
  if (!Number.isInteger(request.limit) || request.limit < 1)
    throw new Error(`the limit must be a positive integer, got ${request.limit}`);
}

/** The update's body: cancels, joins the line, and waits up to `waitMs` for one of its ids. */
async function acquireSessions(
  state: SessionBudgetState,
  request: AcquireRequest,
  isDraining: () => boolean,
): Promise<AcquireResult> {
  markSeen(state, request.holder);
  state.limit = request.limit;
  const cancelled = new Set(request.cancel ?? []);
  dropOwned(state, (x) => x.holder === request.holder && cancelled.has(x.id));
  expireSilentHolders(state);
  if (request.ifFree) {
    grantWaiting(state);
    return grantFree(state, request, isDraining());
  }
  if (!isDraining()) {
    for (const id of request.ids) {
      if (!isLeased(state, id) && !isQueued(state, id))
        state.waiting.push({ id, holder: request.holder, since: Date.now() });
    }
  }
  grantWaiting(state);
  const anyGranted = () => request.ids.some((id) => isLeased(state, id));
  if (request.ids.length > 0 && !anyGranted() && !isDraining())
    await condition(() => anyGranted() || isDraining(), Math.max(1, request.waitMs));
  return {
    granted: request.ids.filter((id) => isLeased(state, id)),
    leased: state.leases.length,
    waiting: state.waiting.length,
  };
}

/** `ifFree`: what the account has room for now, if nobody waits in line; nothing joins the line. */
function grantFree(state: SessionBudgetState, request: AcquireRequest, draining: boolean): AcquireResult {
  const granted: string[] = [];
  for (const id of request.ids) {
    if (isLeased(state, id)) granted.push(id);
    else if (
      !draining &&
      !isQueued(state, id) &&
      state.waiting.length === 0 &&
      state.leases.length < state.limit
    ) {
      state.leases.push({ id, holder: request.holder, grantedAt: Date.now() });
      state.grants += 1;
      granted.push(id);
    }
  }
  state.peak = Math.max(state.peak, state.leases.length);
  return { granted, leased: state.leases.length, waiting: state.waiting.length };
}

function releaseSessions(state: SessionBudgetState, request: ReleaseRequest): void {
  const ids = new Set(request.ids ?? []);
  dropOwned(state, (x) => x.holder === request.holder && (request.all || ids.has(x.id)));
  if (request.all) {
    // A worker stopping gracefully ends its activities itself (Temporal retries them).
    delete state.holders[request.holder];
    delete state.running?.[request.holder];
  } else markSeen(state, request.holder);
  expireAndGrant(state);
}

function renewSessions(state: SessionBudgetState, request: RenewRequest): void {
  markSeen(state, request.holder);
  trackRunning(state, request);
  expireAndGrant(state);
}

function budgetView(state: SessionBudgetState): SessionBudgetView {
  return {
    limit: state.limit,
    leased: state.leases.length,
    leasedBy: state.leases.reduce<Record<string, number>>(
      (by, l) => ({ ...by, [l.holder]: (by[l.holder] ?? 0) + 1 }),
      {},
    ),
    waiting: state.waiting.length,
    holders: Object.keys(state.holders).length,
    peak: state.peak,
    grants: state.grants,
    expired: state.expired,
    running: Object.values(state.running ?? {}).reduce((n, list) => n + list.length, 0),
    reaped: state.reaped ?? 0,
    run: state.run,
  };
}

function registerHandlers(state: SessionBudgetState, isDraining: () => boolean): void {
  setHandler(acquireSessionsUpdate, (request) => acquireSessions(state, request, isDraining), {
    validator: validateAcquire,
  });
  setHandler(releaseSessionsSignal, (request) => releaseSessions(state, request));
  setHandler(renewSessionsSignal, (request) => renewSessions(state, request));
  setHandler(sessionBudgetQuery, () => budgetView(state));
}

/**
 * Expiry needs a clock even when no worker says anything: a sweep when the worker heard of longest ago
 * expires (so a lost worker's sessions are retried a lease's life after its last renew, not up to half
 * a life later), at least every half lease life.
 */
function nextSweepMs(state: SessionBudgetState): number {
  const half = Math.max(1000, Math.floor(state.leaseTtlMs / 2));
  const seen = Object.values(state.holders);
  if (seen.length === 0) return half;
  const due = Math.min(...seen) + state.leaseTtlMs + 1 - Date.now();
  return Math.min(half, Math.max(1000, due));
}

async function sweepUntilTooLong(state: SessionBudgetState, maxHistoryEvents: number): Promise<void> {
  const tooLong = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > maxHistoryEvents;
  while (!tooLong()) {
    await condition(tooLong, nextSweepMs(state));
    expireAndGrant(state);
  }
}

const { failLostSessions } = proxyActivities<LivenessActivities>({
  startToCloseTimeout: '1 minute',
  retry: RETRY_POLICIES.failLostSessions,
});

/**
 * Fails the activities of lost workers, a batch at a time, until the run drains (what is left is carried
 * to the next run). A batch that cannot be failed is given up: those sessions wait out their heartbeat
 * timeout instead.
 */
async function reapLostWorkers(state: SessionBudgetState, isDraining: () => boolean, busy: { now: boolean }) {
  for (;;) {
    await condition(() => !isDraining() && (state.reaping?.length ?? 0) > 0);
    const batch = state.reaping!.splice(0);
    busy.now = true;
    try {
      await failLostSessions({ activities: batch });
    } catch (err) {
      log.warn('could not fail the activities of a lost worker; their heartbeat timeouts will', {
        activities: batch.length,
        reason: err instanceof Error ? err.message : String(err),
      });
    } finally {
      busy.now = false;
    }
  }
}

/**
 * AUTO_UPGRADE: it can live for days (continuing as new), so it moves to the current build at its next
 * workflow task (workers/versioning.ts); a change to it must replay its open runs' histories.
 */
declareVersioning('AUTO_UPGRADE', sessionBudget);

export async function sessionBudget(input: SessionBudgetInput): Promise<never> {
  const state = input.state ?? initialState(input);
  const maxHistoryEvents = input.maxHistoryEvents ?? MAX_HISTORY_EVENTS;
  let draining = false;
  const reaping = { now: false };
  registerHandlers(state, () => draining);
  void reapLostWorkers(state, () => draining, reaping);
  await sweepUntilTooLong(state, maxHistoryEvents);
  // Waiting handlers answer `granted: false` (their requests keep their places in the carried line).
  draining = true;
  await condition(() => allHandlersFinished() && !reaping.now);
  return continueAsNew<typeof sessionBudget>({
    limit: state.limit,
    leaseTtlMs: state.leaseTtlMs,
    maxHistoryEvents,
    state: { ...state, run: state.run + 1 },
  });
}
