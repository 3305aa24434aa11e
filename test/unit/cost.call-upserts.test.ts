/**
 * Search-attribute upserts of a call, counted as the cost meter counts them (activities/cost/
 * history-actions.ts), on recorded runs of real calls (test/fixtures/histories, recorded by
 * test/integration/process-recording.e2e.test.ts): a run of today's code upserts at its milestones only
 * (workflows/call-attributes.ts), and records no patch marker.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { historyActions } from '../../activities/cost/history-actions.ts';

const history = (file: string) =>
  historyFromJSON(
    JSON.parse(
      readFileSync(fileURLToPath(new URL(`../fixtures/histories/${file}`, import.meta.url)), 'utf8'),
    ),
  );

const upserts = (file: string) => historyActions(history(file).events ?? []).actions.searchAttributesUpsert;

describe('search-attribute upserts per call', () => {
  it('a done stereo call upserts twice: recognize and done (no patch marker, no TemporalChangeVersion)', () => {
    expect(upserts('process-recording-stereo.json')).toBe(2);
  });

  it('a call failed at its probe upserts once: its end', () => {
    expect(upserts('process-recording-failed.json')).toBe(1);
  });
});
