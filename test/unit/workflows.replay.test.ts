/**
 * Determinism guard: histories recorded from real runs (test/fixtures/histories, refreshed by running
 * the e2e test with CALLPIPE_RECORD_HISTORIES=1) must replay against today's workflow code. A change
 * that alters the commands a recorded run issued fails here, before it breaks running workflows.
 *
 * Histories from before a retired patch are kept as the proof of its retirement: since
 * `deprecatePatch('pipelined-sessions')` they must be refused, which is why that step waits until no
 * run from before the patch can be open (CHANGELOG.md, 0.2.0).
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { bundleWorkflows } from '../../workers/runtime.ts';

const DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
/**
 * Runs that reached the retired patch's branch point on its old path. (A run from before the patch that
 * failed at probe never reached it: it still replays, and stays among the current histories.)
 */
const RETIRED = /^process-recording-stereo-before-pipelined-sessions\.json$/;

function history(file: string): { events: unknown[] } {
  // Passed as JSON: the worker parses it with its own protobuf runtime (a History object built by
  // another copy of protobufjs would not be recognized).
  return JSON.parse(readFileSync(`${DIR}${file}`, 'utf8')) as { events: unknown[] };
}

describe('recorded workflow histories', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));
  const current = files.filter((f) => !RETIRED.test(f));
  const retired = files.filter((f) => RETIRED.test(f));
  let code: string;

  it('exist for the recording workflow (done and failed, from before and after each patch) and batches', () => {
    expect(current).toEqual(
      expect.arrayContaining([
        'process-recording-stereo.json',
        // A done call from before the insights stage (patch insights-stage): its single writeResult.
        'process-recording-stereo-before-insights-stage.json',
        // A done call from before the speakers stage (patch speakers-stage): redaction reads the merged timeline.
        'process-recording-stereo-before-speakers-stage.json',
        // A done call from before staged tracks (patch staged-tracks): a transcodeSource per session.
        'process-recording-stereo-before-staged-tracks.json',
        'process-recording-failed.json',
        'process-recording-failed-before-pipelined-sessions.json',
        // A done and a failed call from before the search-attribute milestones (patch
        // search-attribute-milestones): an upsert per stage and fact, a marker per patch.
        'process-recording-stereo-before-search-attribute-milestones.json',
        'process-recording-failed-before-search-attribute-milestones.json',
        // A call with audio redaction on (patch redacted-audio), recorded by test/integration/redaction.test.ts.
        'process-recording-redacted-audio.json',
        // Batches started with the input of before CallSpec (`child`), a window of children and a chain of
        // runs continued as new, recorded from test/workflow/backfill.test.ts with the code of that time.
        'backfill-window-before-call-spec.json',
        'backfill-continue-as-new-run-1-before-call-spec.json',
        'backfill-continue-as-new-run-2-before-call-spec.json',
        'backfill-continue-as-new-run-3-before-call-spec.json',
      ]),
    );
    expect(retired).toEqual(['process-recording-stereo-before-pipelined-sessions.json']);
  });

  it('replay clean against the current workflow code', { timeout: 120_000 }, async () => {
    code ??= await bundleWorkflows();
    for (const file of current) {
      const events = history(file);
      expect(events.events.length, file).toBeGreaterThan(10);
      await Worker.runReplayHistory({ workflowBundle: { code } }, events, file);
    }
  });

  it('from before the retired pipelined-sessions patch are refused', { timeout: 120_000 }, async () => {
    code ??= await bundleWorkflows();
    for (const file of retired) {
      await expect(
        Worker.runReplayHistory({ workflowBundle: { code } }, history(file), file),
        file,
      ).rejects.toThrow(/[Nn]ondetermin/);
    }
  });
});
