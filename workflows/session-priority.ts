/**
 * Task-queue priority of a call's media and recognition work: longest sessions first.
 *
 * The asr queue is a shared pool of the account's concurrent sessions; first come, first served, a night
 * ends with whichever long session happened to be queued last streaming alone. Dispatching the longest
 * first (LPT) ends a night within about one short session of its ideal. The media queue uses the same key
 * for a session's transcode, so the long sessions are also the first staged, and a call's plan runs by
 * its length, so the longest calls are cut first. Temporal's priority keys are 1 (first) to 5 (last),
 * default 3, and a level's tasks all go before the next level's.
 */

/** Lower bounds (seconds of session audio) of priority keys 1 to 4; shorter is 5. */
const BOUNDS = [1200, 600, 240, 90] as const;

export function sessionPriority(seconds: number): { priorityKey: number } {
  const level = BOUNDS.findIndex((bound) => seconds >= bound);
  return { priorityKey: level === -1 ? BOUNDS.length + 1 : level + 1 };
}
