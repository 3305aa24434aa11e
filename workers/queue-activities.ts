/**
 * Activities of each task queue, built from configuration (STYLE: factories that take their
 * dependencies, so tests pass fakes and workers pass the real things).
 */
import { Runtime } from '@temporalio/worker';
import { slowestPace } from '../schemas/call-spec.ts';
import { type Config } from '../schemas/config.ts';
import { createServiceClient, type ServiceClient } from '../service/index.ts';
import type { PaceEvent } from '../service/pace.ts';
import { metrics } from '../activities/metrics.ts';
import { createObjectStore, createS3Client, type ObjectStore } from '../activities/storage/object-store.ts';
import { createStorageActivities } from '../activities/storage/storage-activities.ts';
import { S3StagingStore } from '../activities/storage/staging-s3.ts';
import { createCallStateActivities } from '../activities/storage/call-state-activities.ts';
import { createResultActivities } from '../activities/storage/result-activities.ts';
import { createTableActivities } from '../activities/tables/table-activities.ts';
import { createRecordingMediaActivities } from '../activities/media/recording-media-activities.ts';
import { createMergeActivities } from '../activities/media/merge-activities.ts';
import { createAsrActivities } from '../activities/asr/asr-activities.ts';
import { createLivenessActivities } from '../activities/asr/liveness-activities.ts';
import type { PieceLeases } from '../activities/asr/pieces-activities.ts';
import { createNlpActivities } from '../activities/nlp/nlp-activities.ts';
import { createPacer } from '../activities/nlp/pacing.ts';
import { loadRedactionRules } from '../activities/nlp/redaction/redaction-rules.ts';
import { createBackfillActivities } from '../activities/backfill/backfill-activities.ts';
import { createWatchActivities } from '../activities/watch/watch-activities.ts';
import { createRescoreActivities } from '../activities/insights/rescore-activities.ts';
import { createInsightsActivities } from '../activities/insights/insights-activities.ts';
import { createSpeakersActivities } from '../activities/speakers/speakers-activities.ts';
import { createPageActivities } from '../activities/pages/page-activities.ts';
import { createEventActivities } from '../activities/events/event-activities.ts';
import { createLifecycleActivities } from '../activities/lifecycle/lifecycle-activities.ts';
import type { Client } from '@temporalio/client';
import { withFailureBoundary } from '../activities/failure-boundary.ts';
import { withLivenessHeartbeat } from '../activities/liveness-heartbeat.ts';
import { attemptNumber } from '../activities/nlp/context.ts';
import { s3SocketsFor } from '../schemas/limits.ts';
import { threadedDownload } from '../activities/storage/threaded-download.ts';
import { digestKeyOf } from '../schemas/personal-digest.ts';
import { callIdRuleOf } from '../activities/storage/call-id.ts';
import { sessionBudgetAddress } from './session-budget-client.ts';

/**
 * Inside workers the S3 client sends each request once: Temporal's attempts are the one retry loop for
 * object storage (schemas/retry-table.ts), so a dead store costs attempts, not attempts × 5.
 */
const S3_ATTEMPTS_IN_WORKERS = 1;

/** The worker's store: its S3 pool sized from the limits, so no configured session waits for a socket. */
function workerStore(config: Config): ObjectStore {
  return createObjectStore(
    config.s3,
    createS3Client(config.s3, {
      maxAttempts: S3_ATTEMPTS_IN_WORKERS,
      maxSockets: s3SocketsFor(config.limits),
    }),
  );
}

/** Every activity's failures typed and retried as the retry table says. */
function bounded<T extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: T): T {
  return withFailureBoundary(activities, attemptNumber);
}

export interface ActivityDeps {
  config: Config;
  store?: ObjectStore;
  service?: ServiceClient;
}

/** `speed: auto` in the worker's log and in `callpipe_asr_pace` (a refusal cost a session a restart). */
function paceEventSink(event: PaceEvent): void {
  metrics.pace(event.rate);
  const log = Runtime.instance().logger;
  if (event.type === 'refused')
    log.warn('the service refused the recognition pace (412); slowing down', { ...event });
  else log.info(`recognition pace ${event.type}`, { ...event });
}

function deps({ config, store, service }: ActivityDeps) {
  return {
    store: store ?? workerStore(config),
    service:
      service ??
      createServiceClient(config.service, {
        concurrency: { nlp: config.limits.nlpConcurrency, asrSessions: config.limits.asrConcurrentSessions },
        onPaceEvent: paceEventSink,
      }),
  };
}

/**
 * `callpipe-media` (and `callpipe-probe`, probes only): probe, plan (which stages the tracks), merge,
 * results and the analysis tables (CPU and object storage).
 */
export function mediaQueueActivities(input: ActivityDeps) {
  const { store } = deps(input);
  // Sources go to the worker's cache on the download thread, unless a caller brought a store of its own.
  const download = input.store
    ? undefined
    : threadedDownload(input.config.s3, { maxSockets: s3SocketsFor(input.config.limits) });
  return bounded(
    withLivenessHeartbeat({
      ...createStorageActivities({ store }),
      ...createRecordingMediaActivities({
        store,
        download,
        staging: new S3StagingStore(store),
      }),
      ...createMergeActivities({ store }),
      ...createSpeakersActivities({ store }),
      ...createInsightsActivities({ store }),
      ...createResultActivities({
        store,
        personalColumns: input.config.redaction.personalColumns,
        digestKey: digestKeyOf(input.config.redaction),
        callIds: input.config.callIds,
      }),
      ...createCallStateActivities({ store }),
      // Call events are emitted where the call's outputs are written.
      ...createEventActivities({ store, config: input.config.events }),
      ...createTableActivities({ store, callIds: input.config.callIds }),
    }),
  );
}

/**
 * `callpipe-asr`: one long, heartbeating activity per recognition session, or per group of pieces
 * recognized by file requests, which take leases on the account's sessions (`pieceLeases`: the process's
 * session budget, when the account's limit is shared) for the requests beyond their own slot.
 */
export function asrQueueActivities(input: ActivityDeps & { pieceLeases?: PieceLeases }) {
  const { store, service } = deps(input);
  return bounded(
    createAsrActivities({
      service,
      store,
      slowestPace: slowestPace(input.config.service.speed),
      model: input.config.service.model,
      pieceLeases: input.pieceLeases,
      // A group sends at most as many requests at once as the process may have sessions open.
      maxPiecesInFlight: input.config.limits.asrConcurrentSessions,
    }),
  );
}

/**
 * `callpipe-nlp`: text calls, rate-limited; and the pages of a rescore that classify calls again (one
 * request a call), paced with them.
 */
export function nlpQueueActivities(input: ActivityDeps) {
  const { store, service } = deps(input);
  // The task-queue rate limit spaces activity starts only; one activity sends many requests, so each
  // process also paces its own requests: one pacer for every request of the process.
  const pacer = createPacer(input.config.limits.nlpRequestsPerSecond);
  return bounded({
    ...withLivenessHeartbeat(
      createNlpActivities({
        service,
        store,
        pacer,
        redactionRules: loadRedactionRules(input.config.redaction),
        digestKey: digestKeyOf(input.config.redaction),
      }),
    ),
    // Heartbeats its own progress (the page's rows).
    rescorePage: createRescoreActivities({
      store,
      callIds: callIdRuleOf(input.config),
      service: () => service,
      pacer,
    }).rescorePage,
  });
}

/**
 * `callpipe` (beside the workflows): the batches' listing and report activities, and rescoring stored
 * results, and the night report (object storage and a little CPU; no service calls).
 */
export function workflowsQueueActivities(input: ActivityDeps & { temporal?: Client }) {
  const store = input.store ?? workerStore(input.config);
  let service = input.service;
  return bounded({
    ...createBackfillActivities({
      store,
      callIds: callIdRuleOf(input.config),
      cost: { temporal: input.temporal, prices: input.config.prices },
    }),
    ...createWatchActivities({
      store,
      s3: input.config.s3,
      callIds: callIdRuleOf(input.config),
      room: {
        temporal: input.temporal,
        budgetWorkflowId: sessionBudgetAddress(input.config).workflowId,
        accountLimit: input.config.limits.asrAccountSessions !== undefined,
      },
    }),
    ...createRescoreActivities({
      store,
      callIds: callIdRuleOf(input.config),
      // Only a rescore with a reasons model talks to the service: the client is made then.
      service: () => (service ??= deps(input).service),
    }),
    ...createPageActivities({ store }),
    // A batch's event, and every event's deliveries (network only, each request bounded).
    ...createEventActivities({ store, config: input.config.events }),
    // forget and retention: objects, table rows, reports, and the calls' executions in Temporal.
    ...createLifecycleActivities({ store, temporal: input.temporal }),
    // The session budget's: a lost asr worker's recognition attempts failed by id, to be retried.
    ...createLivenessActivities({ temporal: input.temporal }),
  });
}
