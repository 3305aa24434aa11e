/**
 * The recorded workflow histories the replay test (test/unit/workflows.replay.test.ts) guards determinism
 * with: integration tests refresh them from real runs when `CALLPIPE_RECORD_HISTORIES=1`.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toolPaths } from '../../cli/tools/provision.ts';
import type { PipelineClient } from '../../cli/stack-client.ts';

const HISTORIES = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

/** Writes a run's history as `temporal workflow show --output json` gives it, when asked to record. */
export function recordHistory(pc: PipelineClient, workflowId: string, name: string): void {
  if (!process.env.CALLPIPE_RECORD_HISTORIES) return;
  const json = execFileSync(toolPaths().temporal, [
    ...['workflow', 'show', '--workflow-id', workflowId, '--output', 'json'],
    ...['--address', pc.config.temporal.address, '--namespace', pc.config.temporal.namespace],
  ]);
  writeFileSync(join(HISTORIES, name), json);
}
