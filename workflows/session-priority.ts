/**
 * Task-queue priority of a call's media and recognition work: longest sessions first, and on the media
 * queue, a call's plan after the other calls' shorter media and storage work.
 *
 * The asr queue is a shared pool of the account's concurrent sessions; first come, first served, a night
 * ends with whichever long session happened to be queued last streaming alone. Dispatching the longest
 * first (LPT) ends a night within about one short session of its ideal. Temporal's priority keys are 1
 * (first) to 5 (last), default 3, and a level's tasks all go before the next level's.
 *
 * The media queue plans calls (a full decode each, which also stages each track whole: seconds to tens
 * of seconds). The work that moves calls already planned on (merge, speakers, insights, publish, the
 * tables: default 3) goes before every plan (keys 4–5, longest call first): when plans of long calls went
 * first, a night's recognition slots starved while planned work waited (bench/README.md, "Figures behind
 * the code").
 */

import type { SessionRecognition } from '../schemas/recognition.ts';

/** Lower bounds (seconds of session audio) of priority keys 1 to 4; shorter is 5. */
const BOUNDS = [1200, 600, 240, 90] as const;

/** A recognition session: keys 1–5 by its length. */
export function sessionPriority(seconds: number): { priorityKey: number } {
  const level = BOUNDS.findIndex((bound) => seconds >= bound);
  return { priorityKey: level === -1 ? BOUNDS.length + 1 : level + 1 };
}

/** A call this long or longer is planned at the earlier of its mode's two keys. */
const LONG_CALL_SECONDS = 1200;

/**
 * A call's plan on the media queue: for streams after the other media work, 4 from 20 minutes, 5 below.
 * For file pieces a long call's plan (2) goes before that work: its pieces are what keeps the sessions
 * busy, and a piece takes a session for a quarter of its audio or less, so the sessions wait for plans,
 * not the other way round; a short call's plan (4) still goes after it.
 */
export function planPriority(callSeconds: number, recognition: SessionRecognition): { priorityKey: number } {
  const long = callSeconds >= LONG_CALL_SECONDS;
  if (recognition === 'file') return { priorityKey: long ? 2 : 4 };
  return { priorityKey: long ? 4 : 5 };
}
