/**
 * Running a per-sentence text step over its units (schemas/text-units.ts cuts them): one request per
 * unit, resumable from the step's progress, and each utterance's value from its unit's.
 */
import type { NlpCallOptions } from '../../service/index.ts';
import type { TextUnit } from '../../schemas/text-units.ts';
import type { CallUtterance } from './call-text.ts';
import type { StepRun } from './step.ts';

/** A unit's key in the step's progress: its first utterance's index. */
const keyOf = (unit: TextUnit<CallUtterance>) => unit.utterances[0]!.utterance.index;

/** Runs `task` over `indices` with at most `concurrency` at once; stops starting new ones after a failure. */
async function pool(
  indices: number[],
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async () => {
    while (!failed && next < indices.length) {
      const i = indices[next++]!;
      try {
        await task(i);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, indices.length)) }, worker));
  if (failed) throw failed.error;
}

/**
 * One request per unit not done by an earlier attempt, `concurrency` at once, each through the step's
 * request loop (its 99997 budget and meter); results go into `run.done` under the unit's key.
 */
export async function eachUnit<T>(
  run: StepRun<T>,
  units: readonly TextUnit<CallUtterance>[],
  concurrency: number,
  request: (unit: TextUnit<CallUtterance>, options: NlpCallOptions) => Promise<T>,
): Promise<void> {
  const byKey = new Map(units.map((u) => [keyOf(u), u]));
  const todo = [...byKey.keys()].filter((k) => !run.done.has(k));
  await pool(todo, concurrency, async (key) => {
    const value = await run.request((o) => request(byKey.get(key)!, o));
    run.done.set(key, value);
    run.progress(run.done.size, units.length);
  });
}

/** Each utterance's value: its unit's. */
export function byUtterance<T>(
  units: readonly TextUnit<CallUtterance>[],
  done: ReadonlyMap<number, T>,
): Map<number, T> {
  const out = new Map<number, T>();
  for (const unit of units) {
    const value = done.get(keyOf(unit));
    if (value !== undefined) for (const u of unit.utterances) out.set(u.utterance.index, value);
  }
  return out;
}
