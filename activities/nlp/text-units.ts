/**
 * The units a per-sentence text step sends, one request each (schemas/text-grains.ts): an utterance, a
 * turn, or a speaker's window. A unit's text is its utterances' texts in time order, each ending in a
 * full stop when there are several, so the service reads them as sentences. Pure.
 */
import type { TextGrain } from '../../schemas/text-grains.ts';
import type { NlpCallOptions } from '../../service/index.ts';
import type { CallUtterance } from './call-text.ts';
import { looseText } from './fillers.ts';
import type { StepRun } from './step.ts';

export interface TextUnit<U extends UnitUtterance = CallUtterance> {
  /** The unit's utterances, in time order (their indices key the step's progress and output). */
  utterances: U[];
  text: string;
}

/** What cutting a call into units reads of an utterance (a step's CallUtterance, or a stored result's). */
export interface UnitUtterance {
  utterance: Pick<CallUtterance['utterance'], 'index' | 'speaker' | 'start' | 'end'>;
  text: string;
}

/** Ends a sentence with a full stop unless it ends with one already. */
function asSentence(text: string): string {
  return /[。．.！!？?]$/u.test(text) ? text : `${text}。`;
}

/** Units of `grain` over a call's utterances (any order; those without text are left out). */
export function textUnits<U extends UnitUtterance = CallUtterance>(
  utterances: readonly U[],
  grain: TextGrain,
  windowSeconds: number,
): TextUnit<U>[] {
  const spoken = utterances
    .filter((u) => looseText(u.text) !== '')
    .sort((a, b) => a.utterance.start - b.utterance.start || a.utterance.index - b.utterance.index);
  const groups: U[][] = [];
  if (grain === 'utterance') for (const u of spoken) groups.push([u]);
  else if (grain === 'turn') {
    for (const u of spoken) {
      const turn = groups.at(-1);
      const first = turn?.[0];
      if (
        turn &&
        first &&
        first.utterance.speaker === u.utterance.speaker &&
        u.utterance.end - first.utterance.start <= windowSeconds
      )
        turn.push(u);
      else groups.push([u]);
    }
  } else {
    const windows = new Map<string, U[]>();
    for (const u of spoken) {
      const key = `${u.utterance.speaker}\u0000${Math.floor(u.utterance.start / windowSeconds)}`;
      const w = windows.get(key);
      if (w) w.push(u);
      else {
        const fresh = [u];
        windows.set(key, fresh);
        groups.push(fresh);
      }
    }
  }
  return groups.map((g) => ({
    utterances: g,
    // One utterance goes as it is; several are joined as sentences.
    text: g.length === 1 ? g[0]!.text : g.map((u) => asSentence(u.text)).join(''),
  }));
}

/** A unit's key in the step's progress: its first utterance's index. */
const keyOf = (unit: TextUnit) => unit.utterances[0]!.utterance.index;

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
  units: readonly TextUnit[],
  concurrency: number,
  request: (unit: TextUnit, options: NlpCallOptions) => Promise<T>,
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
export function byUtterance<T>(units: readonly TextUnit[], done: ReadonlyMap<number, T>): Map<number, T> {
  const out = new Map<number, T>();
  for (const unit of units) {
    const value = done.get(keyOf(unit));
    if (value !== undefined) for (const u of unit.utterances) out.set(u.utterance.index, value);
  }
  return out;
}
