/**
 * Leases for the file requests beyond a group's own slot when the account's limit is not shared (no
 * `CALLPIPE_ASR_ACCOUNT_SESSIONS`): a count of this process's own, as large as its sessions, so that its
 * groups of pieces read no more pieces ahead than the process can send, with no round trip to the
 * session budget (no Temporal action). Asking costs nothing, so groups ask after every piece. The
 * requests themselves wait in the service client's session limiter, which the process's streams share.
 */
import type { PieceLeases } from '../activities/asr/pieces-activities.ts';

export function localPieceLeases(size: number): PieceLeases {
  let free = size;
  let next = 0;
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
  };
}
