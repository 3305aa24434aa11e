/**
 * Determinism guard: histories recorded from real runs of the current code (test/fixtures/histories,
 * refreshed with CALLPIPE_RECORD_HISTORIES=1 by the e2e, redaction, forget and watch integration tests
 * and by test/workflow/backfill.test.ts) must replay against today's workflow code. A change that alters
 * the commands a recorded run issued fails here: it ships as a new Worker Deployment Version
 * (docs/architecture.md, "Shipping a workflow change"), and the fixtures are recorded again from it.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { bundleWorkflows } from '../../workers/runtime.ts';

const DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

function history(file: string): { events: unknown[] } {
  // Passed as JSON: the worker parses it with its own protobuf runtime (a History object built by
  // another copy of protobufjs would not be recognized).
  return JSON.parse(readFileSync(`${DIR}${file}`, 'utf8')) as { events: unknown[] };
}

/** A history's marker events: a run of today's code records none (no patches). */
function markers(events: unknown[]): unknown[] {
  return events.filter((e) => (e as { eventType?: string }).eventType === 'EVENT_TYPE_MARKER_RECORDED');
}

describe('recorded workflow histories', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

  it('exist for the recording workflow (done, failed, redacted audio) and batches', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'process-recording-stereo.json',
        'process-recording-failed.json',
        // A call with audio redaction on, recorded by test/integration/redaction.test.ts.
        'process-recording-redacted-audio.json',
        // A window of children, and a chain of runs continued as new (test/workflow/backfill.test.ts).
        'backfill-window.json',
        'backfill-continue-as-new-run-1.json',
        'backfill-continue-as-new-run-2.json',
        'backfill-continue-as-new-run-3.json',
      ]),
    );
  });

  it(
    'replay clean against the current workflow code, and hold no patch marker',
    { timeout: 120_000 },
    async () => {
      const code = await bundleWorkflows();
      for (const file of files) {
        const events = history(file);
        expect(events.events.length, file).toBeGreaterThan(10);
        expect(markers(events.events), file).toEqual([]);
        await Worker.runReplayHistory({ workflowBundle: { code } }, events, file);
      }
    },
  );
});
