/** Polls `probe` every 0.5 s until `ok` holds, or fails naming `what` and the last value after `timeoutMs`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 300_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
