/**
 * Determinism guard: histories recorded from real runs (test/fixtures/histories, refreshed by running
 * the e2e test with CALLPIPE_RECORD_HISTORIES=1) must replay against today's workflow code. A change
 * that alters the commands a recorded run issued fails here, before it breaks running workflows.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { bundleWorkflows } from '../../workers/runtime.ts';

const DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

describe('recorded workflow histories', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

  it('exist for the recording workflow, done and failed, from before and after each patch', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'process-recording-stereo.json',
        'process-recording-failed.json',
        // Recorded before the `pipelined-sessions` patch: runs in flight at a deploy take the old path.
        'process-recording-stereo-before-pipelined-sessions.json',
        'process-recording-failed-before-pipelined-sessions.json',
      ]),
    );
  });

  it('replay clean against the current workflow code', { timeout: 120_000 }, async () => {
    const code = await bundleWorkflows();
    for (const file of files) {
      // Passed as JSON: the worker parses it with its own protobuf runtime (a History object built by
      // another copy of protobufjs would not be recognized).
      const history = JSON.parse(readFileSync(`${DIR}${file}`, 'utf8')) as { events: unknown[] };
      expect(history.events.length, file).toBeGreaterThan(10);
      await Worker.runReplayHistory({ workflowBundle: { code } }, history, file);
    }
  });
});
