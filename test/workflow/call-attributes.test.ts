/**
 * A call's search attributes cost one Temporal action per upsert (workflows/call-attributes.ts): a call
 * upserts at its milestones only (recognition, end), each upsert carrying every fact learnt since, and
 * still ends with every attribute operators filter on. No patch marker, so no `TemporalChangeVersion`
 * upsert: a change ships as a new Worker Deployment Version. Counted from the call's own history.
 */
import { describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { processRecording, progressQuery } from '../../workflows/process-recording.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/search-attribute-keys.ts';
import { historyActions } from '../../activities/cost/history-actions.ts';
import {
  CALL_SECONDS,
  mockActivities,
  nonRetryable,
  pick,
  processInput,
  uniqueQueue,
  useTestEnv,
  waitFor,
  withWorker,
  type Mocks,
} from './helpers.ts';

const testEnv = useTestEnv();
const K = SEARCH_ATTRIBUTE_KEYS;

/** The upserts of a run, in order: the attribute names each one set (Temporal's own among them). */
async function upserts(handle: WorkflowHandle): Promise<string[][]> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).flatMap((e) => {
    const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    return fields ? [Object.keys(fields).sort()] : [];
  });
}

/** One call to its end, started as `callpipe process` and the batches start calls: ids in the start options. */
async function runCall(name: string, mocks: Mocks, options: { idsAtStart?: boolean; redo?: boolean } = {}) {
  const taskQueue = uniqueQueue(name);
  const callId = `${name}-3f9a0c1e`;
  const batchId = `batch-${name}`;
  return withWorker(testEnv(), taskQueue, mocks.activities, async () => {
    const handle = await testEnv().client.workflow.start(processRecording, {
      taskQueue,
      workflowId: `process-${taskQueue}`,
      args: [processInput(taskQueue, callId, { batchId, ...(options.redo ? { redo: true } : {}) })],
      ...(options.idsAtStart === false
        ? {}
        : {
            typedSearchAttributes: [
              { key: K.callId, value: callId },
              { key: K.batchId, value: batchId },
            ],
          }),
    });
    const result = await handle.result();
    const described = await handle.describe();
    const { events } = await handle.fetchHistory();
    return {
      handle,
      result,
      callId,
      batchId,
      attributes: described.typedSearchAttributes,
      upserts: await upserts(handle),
      actions: historyActions(events ?? []).actions,
    };
  });
}

describe('a call upserts its search attributes at its milestones', () => {
  it('a done call: two upserts (recognize, done), ending with every attribute', async () => {
    const mocks = mockActivities();
    const score = mocks.computeInsights.getMockImplementation()!;
    mocks.computeInsights.mockImplementation(async (input) => ({
      ...((await score(input)) as object),
      categories: ['complaint'],
    }));
    const run = await runCall('milestones', mocks);
    expect(run.result.status).toBe('done');
    expect(run.actions.searchAttributesUpsert).toBe(2);
    const [recognize, end] = run.upserts;
    // Each carries the stage and what was learnt since the last: the facts of probe and plan with the
    // first, the speakers stage's, the categories and the outcome with the end.
    expect(recognize).toEqual(['CallpipeAudioSeconds', 'CallpipeSpeakers', 'CallpipeStage']);
    expect(end).toEqual([
      'CallpipeCategories',
      'CallpipeOutcome',
      'CallpipeRoles',
      'CallpipeSpeakers',
      'CallpipeStage',
    ]);
    // No patch marker: the run has one path.
    const { events } = await run.handle.fetchHistory();
    expect((events ?? []).filter((e) => e.markerRecordedEventAttributes).length).toBe(0);
    const sa = run.attributes;
    expect(sa.get(K.callId)).toBe(run.callId);
    expect(sa.get(K.batchId)).toBe(run.batchId);
    expect(sa.get(K.stage)).toBe('done');
    expect(sa.get(K.outcome)).toBe('done');
    expect(sa.get(K.audioSeconds)).toBe(CALL_SECONDS);
    expect(sa.get(K.speakers)).toBeGreaterThan(0);
    expect(sa.get(K.roles)).toBeDefined();
    expect(sa.get(K.categories)).toEqual(['complaint']);
  });

  it('shows `recognize` while the sessions stream, and the precise stage in the progress query', async () => {
    const mocks = mockActivities();
    const taskQueue = uniqueQueue('streaming');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const recognize = mocks.recognizeSession.getMockImplementation()!;
    mocks.recognizeSession.mockImplementation(async (input) => {
      await held;
      return recognize(input);
    });
    await withWorker(testEnv(), taskQueue, mocks.activities, async () => {
      const handle = await testEnv().client.workflow.start(processRecording, {
        taskQueue,
        workflowId: `process-${taskQueue}`,
        args: [processInput(taskQueue, 'streaming-3f9a0c1e')],
      });
      await waitFor('both sessions streaming', () => mocks.recognizeSession.mock.calls.length === 2);
      await waitFor('the recognize milestone upserted', async () =>
        (await handle.describe()).typedSearchAttributes.get(K.stage),
      );
      const described = await handle.describe();
      expect(described.typedSearchAttributes.get(K.stage)).toBe('recognize');
      expect(described.typedSearchAttributes.get(K.audioSeconds)).toBe(CALL_SECONDS);
      expect((await handle.query(progressQuery)).stage).toBe('recognize');
      release();
      expect((await handle.result()).status).toBe('done');
    });
  });

  it('a call that fails before its first milestone: one upsert, with what was learnt', async () => {
    const mocks = mockActivities({
      planSource: async () => {
        throw nonRetryable('MediaError', 'cannot decode the recording');
      },
    });
    const run = await runCall('plan-failed', mocks);
    expect(run.result).toMatchObject({ status: 'failed', stage: 'plan' });
    expect(run.upserts).toEqual([['CallpipeAudioSeconds', 'CallpipeOutcome', 'CallpipeStage']]);
    expect(run.attributes.get(K.stage)).toBe('failed');
    expect(run.attributes.get(K.outcome)).toBe('failed');
    expect(run.attributes.get(K.audioSeconds)).toBe(CALL_SECONDS);
    expect(pick(mocks.writeError.mock.calls[0]![0], 'stage')).toBe('plan');
  });

  it('a call done before: one upsert of its own (done, skipped)', async () => {
    const mocks = mockActivities({ resultExists: async () => true });
    const run = await runCall('skipped', mocks);
    expect(run.result.status).toBe('skipped');
    expect(run.upserts).toEqual([['CallpipeOutcome', 'CallpipeStage']]);
    expect(run.attributes.get(K.outcome)).toBe('skipped');
    expect(run.attributes.get(K.callId)).toBe(run.callId);
  });

  it('a start without the ids: they are upserted at once, before anything else', async () => {
    const mocks = mockActivities();
    const run = await runCall('no-ids', mocks, { idsAtStart: false });
    expect(run.result.status).toBe('done');
    expect(run.upserts[0]).toEqual(['CallpipeBatchId', 'CallpipeCallId']);
    expect(run.actions.searchAttributesUpsert).toBe(3);
    expect(run.attributes.get(K.callId)).toBe(run.callId);
  });
});
