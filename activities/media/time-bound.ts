/**
 * Wall-clock bounds of the ffmpeg and ffprobe runs on a recording. Heartbeats only say that a worker is
 * alive, not that its ffmpeg gets anywhere: a tool blocked on a pipe or a stalled input would hold its
 * slot until the activity's start-to-close timeout, then again on every retry. Each run is bounded by
 * what the recording is (its size and, once known, its length) with a generous floor, and a run past
 * its bound fails the call with `timed-out`: the same input would stall again, so it is not retried
 * (and the activity's own timeout never comes first: schemas/media-time-bounds.ts).
 */
import { MediaCancelledError, MediaError } from './errors.ts';

// The bounds' numbers have their home in schemas/, where the workflow reads them for the activities'
// timeouts.
export { timeBoundMs, type MediaTimeBounds } from '../../schemas/media-time-bounds.ts';

/**
 * Runs `work` with a signal that also fires after `ms`: the tools it starts are then killed (ffmpeg.ts
 * kills on abort) and the run fails with a `timed-out` {@link MediaError} naming `what` and `path`.
 * A cancellation through `signal` stays a cancellation.
 */
export async function withinTimeBound<T>(
  what: string,
  path: string,
  ms: number,
  signal: AbortSignal | undefined,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const bound = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    bound.abort();
  }, ms);
  const onAbort = () => bound.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) bound.abort();
  try {
    return await work(bound.signal);
  } catch (err) {
    if (expired && !signal?.aborted && (err instanceof MediaCancelledError || isAbort(err))) {
      throw new MediaError(
        'timed-out',
        `${path}: ${what} got no answer within ${Math.round(ms / 1000)} s, its time bound for this ` +
          `recording (an input that never ends or stalls, such as a pipe)`,
        path,
      );
    }
    throw err;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

function isAbort(err: unknown): boolean {
  return (
    err instanceof Error && (err.name === 'AbortError' || (err as { code?: string }).code === 'ABORT_ERR')
  );
}
