/**
 * Leases for the file requests beyond a group's own slot when the account's limit is not shared (no
 * `CALLPIPE_ASR_ACCOUNT_SESSIONS`): the process's own sessions, handed out piece by piece rather than
 * group by group. Every ask is granted (no Temporal action, nothing to count), so each group has a runner
 * per waiting piece up to its `maxInFlight`; the runners' pieces then wait in {@link PieceLeases.inTurn}
 * for one of the process's sessions, the longest waiting piece of any group first. A piece reads its audio
 * only when its turn comes (neighbouring pieces share one read, kept until the last of them has had it).
 *
 * Why not leases per group: a group holding its leases until its queue runs dry, and asking again only as
 * its own pieces end, leaves sessions idle while another group's pieces wait (a night's tail). Longest
 * first over every waiting piece is the LPT order the asr queue already dispatches sessions in
 * (workflows/session-priority.ts).
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
