/**
 * Polls `probe` every `intervalMs` (0.5 s unless asked) until `ok` holds, or fails naming `what` and the
 * last value after `timeoutMs`. A liveness bound, not a speed: make it generous.
 */
export async function until<T>(
  what: string,
  probe: () => T | Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 300_000,
  intervalMs = 500,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${shown(v)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The last value, for the failure's message: JSON when it has one, else its string. */
function shown(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
