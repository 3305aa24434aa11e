/**
 * The production topology's workers (issue 18): separate worker processes per task queue, as
 * docker-compose.yml runs them (its `deploy.replicas`; test/unit/compose.docker-compose.test.ts keeps the
 * two alike), each one `workers/<queue>.ts` in a process of its own. A drill SIGKILLs one at random and
 * starts a new one in its place, as an orchestrator restarts a crashed container.
 */
import type { ManagedProcess } from '../../cli/stack/process.ts';
import type { RunningStack } from '../../cli/stack/stack.ts';
import { queueWorkerProcess } from './workers-process.ts';

export type QueueEntry = 'workflows' | 'media' | 'asr' | 'nlp';

/** Worker processes per task queue. */
export const TOPOLOGY: Record<QueueEntry, number> = { workflows: 2, media: 2, asr: 3, nlp: 2 };

interface Slot {
  entry: QueueEntry;
  index: number;
  generation: number;
  process: ManagedProcess;
  /** A replacement is starting: not to be killed before it is up. */
  starting: boolean;
}

export interface WorkerFleet {
  /** Every slot's current process, for messages: `asr-2#3` is the third process of asr slot 2. */
  names(): string[];
  /** Slots whose process is up (not a replacement still starting): the ones a drill may kill. */
  killable(): number[];
  /**
   * SIGKILLs the process of slot `at` (an index into the slots) and starts its replacement; resolves once
   * it is killed, with `ready`, which resolves when the replacement is up (seconds after the kill).
   */
  killAndReplace(at: number): Promise<{ killed: string; ready: Promise<number> }>;
  size: number;
  stop(): Promise<void>;
}

export async function startWorkerFleet(
  stack: RunningStack,
  options: {
    bundlePath: string;
    topology?: Record<QueueEntry, number>;
    /** Environment of every worker, then of one queue's. */
    env: Record<string, string>;
    queueEnv?: Partial<Record<QueueEntry, Record<string, string>>>;
    label: string;
  },
): Promise<WorkerFleet> {
  const topology = options.topology ?? TOPOLOGY;
  const make = (entry: QueueEntry, index: number, generation: number) =>
    queueWorkerProcess(stack, entry, {
      name: `${options.label}-${entry}-${index}-${generation}`,
      bundlePath: options.bundlePath,
      env: { ...options.env, ...options.queueEnv?.[entry] },
    });
  const slots: Slot[] = (Object.entries(topology) as [QueueEntry, number][]).flatMap(([entry, n]) =>
    Array.from({ length: n }, (_, index) => ({
      entry,
      index,
      generation: 1,
      process: make(entry, index, 1),
      starting: false,
    })),
  );
  const stop = () => Promise.all(slots.map((s) => s.process.stop().catch(() => undefined))).then(() => {});
  try {
    // The workflows workers first: the first asr worker starts the account's session budget workflow.
    for (const entry of ['workflows', 'media', 'nlp', 'asr'] as const)
      await Promise.all(slots.filter((s) => s.entry === entry).map((s) => s.process.start()));
  } catch (err) {
    await stop();
    throw err;
  }
  const name = (s: Slot) => `${s.entry}-${s.index}#${s.generation}`;
  return {
    size: slots.length,
    names: () => slots.map(name),
    killable: () => slots.flatMap((s, i) => (s.starting ? [] : [i])),
    async killAndReplace(at) {
      const slot = slots[at]!;
      const killed = name(slot);
      await slot.process.kill();
      const t0 = Date.now();
      slot.generation += 1;
      slot.process = make(slot.entry, slot.index, slot.generation);
      slot.starting = true;
      const ready = slot.process.start().then(() => {
        slot.starting = false;
        return (Date.now() - t0) / 1000;
      });
      return { killed, ready };
    },
    stop,
  };
}
