/**
 * Leases for the file requests beyond a group's own slot when the account's limit is not shared (no
 * `CALLPIPE_ASR_ACCOUNT_SESSIONS`): a count of this process's own, as large as its sessions, so that its
 * groups of pieces read no more pieces ahead than the process can send, with no round trip to the
 * session budget (no Temporal action). Asking costs nothing, so groups ask after every piece. The
 * requests themselves wait in the service client's session limiter, which the process's streams share.
 *
 * Each group's own slot runs a piece beside its leases, so the process's groups can have a few more
 * pieces under way than it has sessions. Those pieces wait in {@link PieceLeases.inTurn}, in the order
 * their runners started (each group's pieces longest first), before reading their audio: the pieces that
 * wait are then the last started (a group's shortest), not whichever finished reading its audio last,
 * which could be a call's longest piece and end the call's recognition a short piece's time late.
 */
import pLimit from 'p-limit';
import type { PieceLeases } from '../activities/asr/pieces-activities.ts';

export function localPieceLeases(size: number): PieceLeases {
  let free = size;
  let next = 0;
  const turns = pLimit(size);
  return {
    askAfterEachPiece: true,
    async takeFree(count) {
      const n = Math.max(0, Math.min(count, free));
      free -= n;
      return Array.from({ length: n }, () => `local#${++next}`);
    },
    release() {
      free += 1;
    },
    inTurn: (send) => turns(send),
  };
}
