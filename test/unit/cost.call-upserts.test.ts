/**
 * Search-attribute upserts of a call, counted as the cost meter counts them (activities/cost/
 * history-actions.ts), on recorded runs of real calls (test/fixtures/histories, recorded by
 * test/integration/process-recording.e2e.test.ts): a run of today's code upserts at its milestones only
 * (workflows/call-attributes.ts); the runs recorded before upserted at every stage and fact.
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
  it("a done stereo call upserts four times: its two patch markers' TemporalChangeVersion, recognize, done", () => {
    // The milestones' marker (standing for every earlier patch), the staged tracks' at the plan.
    expect(upserts('process-recording-stereo.json')).toBe(4);
    // Recorded with the milestones, before the staged tracks: one marker.
    expect(upserts('process-recording-stereo-before-staged-tracks.json')).toBe(3);
    // The same call recorded before the milestones: a stage, a fact, an upsert.
    expect(upserts('process-recording-stereo-before-search-attribute-milestones.json')).toBeGreaterThan(20);
  });

  it("a call failed at its probe upserts twice: its patch marker's TemporalChangeVersion and its end", () => {
    expect(upserts('process-recording-failed.json')).toBe(2);
    expect(upserts('process-recording-failed-before-search-attribute-milestones.json')).toBeGreaterThan(1);
  });
});
