/**
 * Task-queue priority of a call's media and recognition work: longest sessions first, and on the media
 * queue, staging a planned session before planning another call.
 *
 * The asr queue is a shared pool of the account's concurrent sessions; first come, first served, a night
 * ends with whichever long session happened to be queued last streaming alone. Dispatching the longest
 * first (LPT) ends a night within about one short session of its ideal. Temporal's priority keys are 1
 * (first) to 5 (last), default 3, and a level's tasks all go before the next level's.
 *
 * The media queue plans calls (a full decode each, seconds to tens of seconds) and transcodes sessions
 * (about half a second each). A transcode feeds recognition now, a plan only later: when plans of long
 * calls went first (by call length, key 1), a night's media workers spent its first 90 s planning while
 * up to 288 planned sessions waited to be staged and 16 recognition slots ran 5 to 15 sessions
 * (bench/night, speed 20: 524 of 7,300 slot-seconds starved, ratio 1.10). So every transcode (keys 1–2,
 * longest first) goes before every plan (keys 4–5, longest call first), with the call's other media and
 * storage work (default 3) between them; transcodes take about a third of the media workers at speed 20,
 * so plans still run most of the time.
 */

/** Lower bounds (seconds of session audio) of priority keys 1 to 4; shorter is 5. */
const BOUNDS = [1200, 600, 240, 90] as const;

/** A recognition session: keys 1–5 by its length. */
export function sessionPriority(seconds: number): { priorityKey: number } {
  const level = BOUNDS.findIndex((bound) => seconds >= bound);
  return { priorityKey: level === -1 ? BOUNDS.length + 1 : level + 1 };
}

/** A session's transcode on the media queue: 1 from 600 s of audio, 2 below. */
export function transcodePriority(sessionSeconds: number): { priorityKey: number } {
  return { priorityKey: sessionSeconds >= 600 ? 1 : 2 };
}

/** A call's plan on the media queue, after every transcode: 4 from 20 minutes, 5 below. */
export function planPriority(callSeconds: number): { priorityKey: number } {
  return { priorityKey: callSeconds >= 1200 ? 4 : 5 };
}
