/**
 * Running a per-sentence text step over its units (schemas/text-units.ts cuts them): one request per
 * distinct text, resumable from the step's progress, and each utterance's value from its unit's.
 *
 * One request per distinct text, not per unit: a text-analysis call is one request with one answer and no
 * session (spec 01, "States and transitions"), so what the service says of a sentence depends on the
 * sentence alone, and units saying the same thing word for word (はい, そうですね, a scripted greeting)
 * share one answer. The result is the one a request per unit would give; the call costs fewer requests.
 */
import type { NlpCallOptions } from '../../service/index.ts';
import type { TextUnit } from '../../schemas/text-units.ts';
import type { CallUtterance } from './call-text.ts';
import type { StepRun } from './step.ts';

/** A unit's key in the step's progress: its first utterance's index. */
const keyOf = (unit: TextUnit<CallUtterance>) => unit.utterances[0]!.utterance.index;

/** Runs `task` over `items` with at most `concurrency` at once; stops starting new ones after a failure. */
async function pool<I>(
  items: readonly I[],
  concurrency: number,
  task: (item: I) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async () => {
    while (!failed && next < items.length) {
      const item = items[next++]!;
      try {
        await task(item);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  if (failed) throw failed.error;
}

/** One question of a step: its key in the step's progress, and what the request sends. */
export interface TextAsk {
  key: number;
  /** All that the request sends (its text, and anything else it depends on): equal asks share one answer. */
  asks: string;
}

/**
 * One request per distinct `asks` among those not answered by an earlier attempt, `concurrency` at once,
 * each through the step's request loop (its 99997 budget and meter); the answer goes into `run.done`
 * under every key that asks it. A key answered before (the checkpoint) answers the others that ask the
 * same.
 */
export async function answerDistinct<T, A extends TextAsk>(
  run: StepRun<T>,
  asks: readonly A[],
  concurrency: number,
  request: (ask: A, options: NlpCallOptions) => Promise<T>,
): Promise<void> {
  const same = new Map<string, A[]>();
  for (const ask of asks) {
    const group = same.get(ask.asks);
    if (group) group.push(ask);
    else same.set(ask.asks, [ask]);
  }
  const total = new Set(asks.map((a) => a.key)).size;
  const answer = (group: readonly A[], value: T) => {
    for (const a of group) run.done.set(a.key, value);
  };
  const todo: A[][] = [];
  for (const group of same.values()) {
    const known = group.find((a) => run.done.has(a.key));
    if (known) answer(group, run.done.get(known.key)!);
    else todo.push(group);
  }
  await pool(todo, concurrency, async (group) => {
    const value = await run.request((o) => request(group[0]!, o));
    answer(group, value);
    run.progress(run.done.size, total);
  });
}

/**
 * One request per distinct unit text (see the module's comment), `concurrency` at once; results go into
 * `run.done` under each unit's key. `request` is given the text alone: the answer can depend on nothing else.
 */
export async function eachUnit<T>(
  run: StepRun<T>,
  units: readonly TextUnit<CallUtterance>[],
  concurrency: number,
  request: (text: string, options: NlpCallOptions) => Promise<T>,
): Promise<void> {
  const asks = units.map((u) => ({ key: keyOf(u), asks: u.text }));
  await answerDistinct(run, asks, concurrency, (ask, o) => request(ask.asks, o));
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
