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
 *
 * The probe queue probes calls (mostly each source's download and a read of its packets: seconds for a
 * big WAV, a fraction of one for a compressed call). On a night its slots are busy from the first call
 * to the last, so the order decides what is left at the end: the biggest sources first, as sessions
 * are, leaves small calls, quick to plan and recognize, for the end. A latency-first call (a watch's
 * same-day call) goes before all of them.
 */

/** Lower bounds (seconds of session audio) of priority keys 1 to 4; shorter is 5. */
const BOUNDS = [1200, 600, 240, 90] as const;

/** A recognition session: keys 1–5 by its length. */
export function sessionPriority(seconds: number): { priorityKey: number } {
  const level = BOUNDS.findIndex((bound) => seconds >= bound);
  return { priorityKey: level === -1 ? BOUNDS.length + 1 : level + 1 };
}

/** A call's plan on the media queue, after the other media work: 4 from 20 minutes, 5 below. */
export function planPriority(callSeconds: number): { priorityKey: number } {
  return { priorityKey: callSeconds >= 1200 ? 4 : 5 };
}

/** Lower bounds (bytes of source) of probe keys 2 to 4; smaller is 5, an unknown size the default 3. */
const PROBE_BOUNDS = [256 * 2 ** 20, 64 * 2 ** 20, 16 * 2 ** 20] as const;

/** A call's probe: 1 for a latency-first call, else 2–5 by the source's size, the biggest first. */
export function probePriority(sizeBytes: number | undefined, latencyFirst: boolean): { priorityKey: number } {
  if (latencyFirst) return { priorityKey: 1 };
  if (sizeBytes === undefined) return { priorityKey: 3 };
  const level = PROBE_BOUNDS.findIndex((bound) => sizeBytes >= bound);
  return { priorityKey: level === -1 ? PROBE_BOUNDS.length + 2 : level + 2 };
}
