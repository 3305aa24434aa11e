/**
 * The watch workflow with mocked activities on the project's dev server: many objects at once taken in
 * key order within its bounds (objects settling at once, calls in flight), a bucket missing for a while,
 * and a recording replaced while settling. The children are the real processRecording, on the same task
 * queue, with mocked activities too.
 */
import { describe, expect, it } from 'vitest';
import { activityInfo } from '@temporalio/activity';
import { watch, watchStatusQuery, stopWatchUpdate } from '../../workflows/watch.ts';
import {
  watchInputSchema,
  type AdmitVerdict,
  type WatchObject,
  type WatchStatus,
} from '../../schemas/watch.ts';
import { mockActivities, pick, testSpec, uniqueQueue, useTestEnv, waitFor, withWorker } from './helpers.ts';

const testEnv = useTestEnv();

const KEYS = Array.from({ length: 40 }, (_, i) => `incoming/call-${String(i).padStart(3, '0')}.wav`);
const object = (key: string, etag = 'v1'): WatchObject => ({ key, etag, size: 1000 });

/** Counts the calls in flight (first activity to last) through the mocks; `max()` is the most at once. */
function countCallsInFlight(mocks: ReturnType<typeof mockActivities>) {
  const inFlight = new Set<string>();
  let maxInFlight = 0;
  const first = mocks.resultExists.getMockImplementation()!;
  const last = mocks.deleteStaging.getMockImplementation()!;
  mocks.resultExists.mockImplementation(async (input) => {
    inFlight.add(activityInfo().workflowExecution?.workflowId ?? '');
    maxInFlight = Math.max(maxInFlight, inFlight.size);
    return first(input);
  });
  mocks.deleteStaging.mockImplementation(async (input) => {
    inFlight.delete(activityInfo().workflowExecution?.workflowId ?? '');
    return last(input);
  });
  return { max: () => maxInFlight };
}

/** A listing whose bucket is missing for the first two listings, then holds all of KEYS at once. */
function missingThenFullListing() {
  let listings = 0;
  return async (input: unknown) => {
    listings += 1;
    if (listings <= 2)
      return { objects: [], done: 0, finished: true, missing: 'the bucket does not exist (HTTP 404)' };
    const after = pick(input, 'after') as string | undefined;
    const limit = Number(pick(input, 'limit'));
    const rest = KEYS.filter((k) => after === undefined || k > after);
    const page = rest.slice(0, limit);
    return {
      objects: page.map((k) => object(k)),
      done: 0,
      lastKey: page.at(-1),
      finished: rest.length <= limit,
    };
  };
}

/**
 * Admission that starts every object, but for one recording replaced while settling (seen again with
 * another ETag the first time); `admitted` counts the starts per key, `order` lists them.
 */
function admissionWithOneReplaced(queue: string) {
  const admitted = new Map<string, number>();
  const order: string[] = [];
  let replacedOnce = false;
  const admit = async (input: unknown): Promise<AdmitVerdict[]> =>
    (pick(input, 'objects') as WatchObject[]).map((o) => {
      if (o.key === KEYS[3] && !replacedOnce) {
        replacedOnce = true;
        return { key: o.key, verdict: 'changed', etag: 'v2', size: 2000 };
      }
      admitted.set(o.key, (admitted.get(o.key) ?? 0) + 1);
      order.push(o.key);
      const id = `${queue}-${o.key.replace(/\W+/g, '-')}`;
      return {
        key: o.key,
        verdict: 'start',
        callId: id,
        workflowId: `call-${id}`,
        etag: o.etag ?? 'v',
        size: o.size,
      };
    });
  return { admit, admitted, order };
}

describe('watch workflow', () => {
  it('takes many objects at once in key order, within its bounds, each once; waits out a missing bucket', async () => {
    const queue = uniqueQueue('watch');
    const mocks = mockActivities();
    const inFlight = countCallsInFlight(mocks);
    const { admit, admitted, order } = admissionWithOneReplaced(queue);
    const activities = {
      ...mocks.activities,
      listWatchedObjects: missingThenFullListing(),
      admitWatchedObjects: admit,
    };
    const input = watchInputSchema.parse({
      watchId: `watch-${queue}`,
      source: { bucket: 'calls', prefix: 'incoming/' },
      output: { bucket: 'callpipe', prefix: 'results/' },
      settleSeconds: 0,
      pollSeconds: 0.2,
      reconcileSeconds: 3600,
      concurrency: 3,
      pageSize: 7,
      maxPending: 5,
      taskQueue: queue,
      spec: testSpec(queue),
    });

    await withWorker(testEnv(), queue, activities, async () => {
      const handle = await testEnv().client.workflow.start(watch, {
        taskQueue: queue,
        workflowId: input.watchId,
        args: [input],
      });
      const missing = await waitFor('the missing bucket in the status', async () => {
        const s = await handle.query(watchStatusQuery);
        return s.sourceProblem ? s : undefined;
      });
      expect(missing.sourceProblem).toBe('the bucket does not exist (HTTP 404)');
      const seen: WatchStatus[] = [];
      const all = await waitFor(
        'every call done',
        async () => {
          const s = await handle.query(watchStatusQuery);
          seen.push(s);
          return s.done === KEYS.length ? s : undefined;
        },
        240_000,
      );
      expect(all).toMatchObject({ started: KEYS.length, failed: 0, replaced: 1, pending: 0, running: 0 });
      expect(all.sourceProblem).toBeUndefined();
      // Bounds held whenever looked at, and by the calls themselves.
      expect(Math.max(...seen.map((s) => s.pending))).toBeLessThanOrEqual(5);
      expect(Math.max(...seen.map((s) => s.running))).toBeLessThanOrEqual(3);
      expect(inFlight.max()).toBeLessThanOrEqual(3);
      // Each object started once, the replaced one too (its second version).
      expect([...admitted.keys()].sort()).toEqual(KEYS);
      expect([...admitted.values()].every((n) => n === 1)).toBe(true);
      // In key order, but for the replaced one, which settled again.
      expect(order.filter((k) => k !== KEYS[3])).toEqual(KEYS.filter((k) => k !== KEYS[3]));
      const stopped = await handle.executeUpdate(stopWatchUpdate);
      expect(stopped.phase === 'stopping' || stopped.phase === 'watching').toBe(true);
      expect(await handle.result()).toMatchObject({ phase: 'stopped', started: KEYS.length });
    });
    // Forty calls through mocked activities: as long as its wait for them allows, on a loaded machine.
  }, 300_000);
});
