/**
 * Leases for the file requests beyond a group's own slot when the account's limit is not shared (no
 * `CALLPIPE_ASR_ACCOUNT_SESSIONS`): the process's own sessions, handed out piece by piece rather than
 * group by group. Every ask is granted (no Temporal action, nothing to count), so each group has a runner
 * per waiting piece up to its `maxInFlight`; the runners' pieces then wait in {@link PieceLeases.inTurn}
 * for one of the process's sessions, the longest waiting piece of any group first, before reading their
 * audio (a waiting piece holds no bytes).
 *
 * Leases held by a group until its queue ran dry let the first groups keep the sessions while a later
 * call's long pieces waited for its own pieces to end before it could ask again, and the sessions idled in
 * a night's tail; longest first over all waiting pieces is the LPT order the asr queue already dispatches
 * sessions in (workflows/session-priority.ts).
 */
import PQueue from 'p-queue';
import type { PieceLeases } from '../activities/asr/pieces-activities.ts';

export function localPieceLeases(size: number): PieceLeases {
  let next = 0;
  const turns = new PQueue({ concurrency: size });
  return {
    async takeFree(count) {
      return Array.from({ length: Math.max(0, count) }, () => `local#${++next}`);
    },
    release() {},
    inTurn: (send, seconds) => turns.add(send, { priority: seconds }),
  };
}
