/**
 * The rescore workflow's pages: on the text queue when the input names it (the CLI names it only when the
 * pages classify: a reasons model, or the rule file's classifier rules, whose lines are classified again),
 * else on the batch's queue. Mocked activities on the project's dev server.
 */
import { describe, expect, it } from 'vitest';
import { rescore } from '../../workflows/rescore.ts';
import { rescoreInputSchema } from '../../schemas/rescore.ts';
import { useTestEnv, uniqueQueue, withWorker, type ActivityImpl } from './helpers.ts';

const testEnv = useTestEnv();

/** The activities a rescore of one page runs, each recording the queue that served it. */
function activitiesOn(queue: string, served: { activity: string; queue: string }[]) {
  const record =
    (activity: string, answer: unknown): ActivityImpl =>
    async () => {
      served.push({ activity, queue });
      return answer;
    };
  return {
    rescorePage: record('rescorePage', {
      cursor: { page: 1, finished: true },
      counters: { listed: 2, updated: 2, current: 0, missing: 0, failed: 0 },
    }),
    writeRescoreReport: record('writeRescoreReport', { jsonKey: 'r.json', csvKey: 'r.csv', rows: 2 }),
  };
}

async function pagesQueue(classifying: boolean): Promise<{ batch: string; text: string; served: unknown }> {
  const env = testEnv();
  const batch = uniqueQueue('rescore');
  const text = uniqueQueue('rescore-nlp');
  const served: { activity: string; queue: string }[] = [];
  const input = rescoreInputSchema.parse({
    batchId: `${batch}-b`,
    source: { kind: 'prefix', bucket: 'callpipe', prefix: 'results/' },
    output: { bucket: 'callpipe', prefix: 'results/' },
    rulesDigest: 'sha256:lines',
    ...(classifying ? { nlpTaskQueue: text } : {}),
  });
  await withWorker(env, batch, activitiesOn(batch, served), () =>
    withWorker(env, text, activitiesOn(text, served), () =>
      env.client.workflow.execute(rescore, { taskQueue: batch, workflowId: `${batch}-wf`, args: [input] }),
    ),
  );
  return { batch, text, served };
}

describe('rescore: where its pages run', () => {
  it('on the text queue when the input names it, even with no reasons model (classifier rules)', async () => {
    const { batch, text, served } = await pagesQueue(true);
    expect(served).toEqual([
      { activity: 'rescorePage', queue: text },
      { activity: 'writeRescoreReport', queue: batch },
    ]);
  });

  it("on the batch's queue when it does not (nothing to classify)", async () => {
    const { batch, served } = await pagesQueue(false);
    expect(served).toEqual([
      { activity: 'rescorePage', queue: batch },
      { activity: 'writeRescoreReport', queue: batch },
    ]);
  });
});
