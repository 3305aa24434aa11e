/**
 * The running real-time factor of this process's file recognition requests, per model: the seconds a
 * request took over the seconds of audio it held, averaged over the recent ones (an exponential moving
 * average, so a service that slows down shows within a few requests). `recognition: auto` decides by it
 * (schemas/recognition.ts); it is shown as the metric `callpipe_asr_file_rtf`.
 *
 * A rate per process, not per deployment: every asr worker measures its own requests to the same
 * service, and the call asks whichever asr worker takes its question.
 */
import { metrics } from '../metrics.ts';

/** Weight of the newest request: about the last ten count. */
const WEIGHT = 0.2;
/** Requests shorter than this say more about the network than about the service's recognition. */
const MIN_AUDIO_SECONDS = 5;

const rates = new Map<string, { rtf: number; requests: number }>();

/** One answered request of `audioSeconds` that took `ms`. */
export function recordFileRequest(model: string, audioSeconds: number, ms: number): void {
  if (audioSeconds < MIN_AUDIO_SECONDS) return;
  const rtf = ms / 1000 / audioSeconds;
  const now = rates.get(model);
  const next = now
    ? { rtf: now.rtf + WEIGHT * (rtf - now.rtf), requests: now.requests + 1 }
    : { rtf, requests: 1 };
  rates.set(model, next);
  metrics.fileRtf(model, next.rtf);
}

/** The running factor of `model`, and how many requests it is measured from; undefined before any. */
export function fileRate(model: string): { rtf: number; requests: number } | undefined {
  return rates.get(model);
}
