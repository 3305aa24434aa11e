/**
 * Heartbeats. Each one that reaches the server is a billed action, and liveness does not need them: a
 * worker that stops renewing with the account's session budget has its sessions failed by id and retried
 * (workflows/session-budget.ts). So a session heartbeats once per heartbeat timeout less this margin,
 * the first one that long after it starts, and the heartbeat timeout is only the fallback. A short
 * timeout (tests, drills) heartbeats every sixth of it, within the bounds below, and the SDK sends the
 * server one per 80 % of it: its own timer, not ours, then keeps the margin.
 */
const HEARTBEAT_MARGIN_MS = 30_000;
const HEARTBEAT_INTERVAL_MIN_MS = 200;
const HEARTBEAT_INTERVAL_MAX_MS = 5000;

export function heartbeatIntervalMs(heartbeatTimeoutMs: number | undefined): number {
  if (!heartbeatTimeoutMs) return HEARTBEAT_INTERVAL_MAX_MS;
  const often = Math.min(
    HEARTBEAT_INTERVAL_MAX_MS,
    Math.max(HEARTBEAT_INTERVAL_MIN_MS, heartbeatTimeoutMs / 6),
  );
  return Math.max(often, heartbeatTimeoutMs - HEARTBEAT_MARGIN_MS);
}
