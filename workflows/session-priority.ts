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
 * The probe queue (one slot a process) takes a batch's calls largest file first: the calls that take
 * longest after their probe (plan, recognition, text) start them first, and the last probes are short
 * calls', whose own stages end soon after. A call's length is not known before its probe; its file's size
 * is (the listing's or the object's), and a longer recording of one format is a larger file.
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

/** Lower bounds (bytes of the recording's file) of probe priority keys 1 to 4; smaller is 5. */
const PROBE_BOUNDS = [64, 16, 4, 1].map((mib) => mib * 1024 * 1024);

/** A call's probe: larger files first; 3 (the default) when the size is not known. */
export function probePriority(sizeBytes: number | undefined): { priorityKey: number } {
  if (sizeBytes === undefined) return { priorityKey: 3 };
  const level = PROBE_BOUNDS.findIndex((bound) => sizeBytes >= bound);
  return { priorityKey: level === -1 ? PROBE_BOUNDS.length + 1 : level + 1 };
}
