/**
 * The retry budget of docs/retries.md is computed from the code, not remembered: every failure type of
 * the retry table is documented, and the waits it states follow from the workflow's activity policies.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ACTIVITY_POLICIES } from '../../workflows/activity-policies.ts';
import { RETRY_TABLE } from '../../schemas/retry-table.ts';
import { RATE_LIMIT_RETRY_ALLOWANCE } from '../../activities/nlp/step.ts';
import { RESULT_WRITE_BUDGET_MS } from '../../activities/asr/asr-activities.ts';

const RETRIES_DOC = readFileSync(new URL('../../docs/retries.md', import.meta.url), 'utf8');

const seconds = (d: string | number | undefined): number => {
  if (typeof d === 'number') return d / 1000;
  const m = /^(\d+) (second|minute)s?$/.exec(d ?? '');
  if (!m) throw new Error(`unexpected duration ${d}`);
  return Number(m[1]) * (m[2] === 'minute' ? 60 : 1);
};

/** Sum of Temporal's waits between `maximumAttempts` attempts: initial × coefficient^k, capped. */
function waits(policy: {
  retry: {
    maximumAttempts?: number;
    initialInterval?: string | number;
    backoffCoefficient?: number;
    maximumInterval?: string | number;
  };
}): number {
  const { maximumAttempts = 0, initialInterval, backoffCoefficient = 2, maximumInterval } = policy.retry;
  let total = 0;
  for (let k = 0; k < maximumAttempts - 1; k++) {
    total += Math.min(seconds(initialInterval) * backoffCoefficient ** k, seconds(maximumInterval));
  }
  return total;
}

describe('docs/retries.md states the retry budget the code has', () => {
  it('documents every failure type of the retry table', () => {
    for (const type of Object.keys(RETRY_TABLE)) expect(RETRIES_DOC, type).toContain(`\`${type}\``);
  });

  it('states the waits of each activity policy', () => {
    expect(waits(ACTIVITY_POLICIES.probe)).toBe(15);
    expect(waits(ACTIVITY_POLICIES.media)).toBe(15);
    expect(waits(ACTIVITY_POLICIES.asr)).toBe(15);
    for (const [name, policy] of Object.entries(ACTIVITY_POLICIES)) {
      expect(RETRIES_DOC, name).toContain(`${waits(policy)} s`);
      expect(RETRIES_DOC, name).toContain(`${policy.retry.maximumAttempts} attempts`);
    }
    expect(RETRIES_DOC).toContain(
      `${RATE_LIMIT_RETRY_ALLOWANCE + 1} requests (1 + ${RATE_LIMIT_RETRY_ALLOWANCE} retries`,
    );
    expect(RETRIES_DOC).toContain(`retried for ${RESULT_WRITE_BUDGET_MS / 60_000} min`);
  });
});
