/**
 * Progress of a step kept across its attempts. A step of hundreds of requests (sentiment is one per
 * utterance) would otherwise start over after every rate-limited attempt, and with a large share of
 * its requests blocked it would never finish. On a failure the step saves what it has (and what it cost) beside its
 * output; the next attempt resumes from there and counts the earlier cost, so the result's request and
 * retry counts cover every attempt. The checkpoint is deleted when the step succeeds.
 *
 * Only a retried attempt looks for one: a first attempt has none to find (a GET saved per step); a
 * reset workflow's step, whose first attempt may find an older run's, starts over instead.
 */
import { z } from 'zod';
import { type CallCost } from '../../service/index.ts';
import { requestCostSchema } from '../../schemas/result.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { checkpointKey } from '../../schemas/call-keys.ts';
import { attemptNumber } from './context.ts';

const checkpointSchema = z.object({
  version: z.literal(1),
  step: z.string(),
  /** The inputs the progress belongs to: a checkpoint of other inputs is ignored. */
  inputs: z.string(),
  cost: requestCostSchema,
  /** Step-specific progress, keyed by utterance index or batch number. */
  done: z.record(z.string(), z.unknown()),
});

export interface Checkpoint<T> {
  cost: CallCost;
  done: Map<number, T>;
}

export async function loadCheckpoint<T>(
  store: ObjectStore,
  outputKey: string,
  step: string,
  inputs: string,
): Promise<Checkpoint<T> | undefined> {
  if (attemptNumber() <= 1) return undefined;
  // One GET, absent or not (a HEAD first would be a second request whenever there is one).
  const found = await store.read(checkpointKey(outputKey));
  if (!found) return undefined;
  const parsed = checkpointSchema.safeParse(JSON.parse(found.body.toString('utf8')));
  if (!parsed.success || parsed.data.step !== step || parsed.data.inputs !== inputs) return undefined;
  const done = new Map<number, T>();
  for (const [k, v] of Object.entries(parsed.data.done)) done.set(Number(k), v as T);
  return { cost: parsed.data.cost, done };
}

export async function saveCheckpoint<T>(
  store: ObjectStore,
  outputKey: string,
  step: string,
  inputs: string,
  checkpoint: Checkpoint<T>,
): Promise<void> {
  const body = {
    version: 1,
    step,
    inputs,
    cost: checkpoint.cost,
    done: Object.fromEntries(checkpoint.done),
  };
  await store.put(checkpointKey(outputKey), JSON.stringify(body), { contentType: 'application/json' });
}

/** Deletes the checkpoint an attempt resumed from (a step that loaded none has none to delete). */
export async function deleteCheckpoint(store: ObjectStore, outputKey: string): Promise<void> {
  await store.deleteKeys([checkpointKey(outputKey)]);
}
