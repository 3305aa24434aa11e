/**
 * In a real browser: a small backfill on the shared test stack, then the Temporal Web UI in headless
 * Chromium (Debian's, driven by playwright-core) lists the batch's workflows when filtered by the
 * custom search attribute CallpipeBatchId, and nothing else. The screenshot is kept in .test-artifacts/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { outputLocation } from '../../cli/submit.ts';
import { startBackfill } from '../../cli/commands/backfill.ts';
import type { BackfillResult } from '../../workflows/backfill.ts';
import { makeCall } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';

const ARTIFACTS = fileURLToPath(new URL('../../.test-artifacts/', import.meta.url));

describe('Temporal Web UI', () => {
  let dir: string;
  let pc: PipelineClient;
  let browser: Browser;
  const run = runId();
  const batchId = `test-ui-${run}`;
  let childIds: string[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
    dir = mkdtempSync(join(tmpdir(), 'callpipe-ui-'));
    pc = await connectPipeline(stackConfig());
    const prefix = `ui-${run}/`;
    for (let i = 0; i < 3; i++) {
      const call = await makeCall(dir, `u-${i}.wav`, { durationSeconds: 3, seed: 700 + i, sampleRate: 8000 });
      await pc.store.putFile(`${prefix}u-${i}.wav`, call.path);
    }
    const started = await startBackfill(pc, {
      batchId,
      source: { kind: 'prefix', bucket: pc.store.bucket, prefix },
      output: outputLocation(undefined, pc.config),
    });
    const result = (await started.handle.result()) as BackfillResult;
    expect(result.done).toBe(3);
    for await (const w of pc.client.workflow.list({ query: `CallpipeBatchId = "${batchId}"` })) {
      childIds.push(w.workflowId);
    }
    childIds = childIds.filter((id) => id !== started.workflowId);
    childIds.push(started.workflowId);
  });

  afterAll(async () => {
    await browser?.close();
    await pc?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("lists the batch's workflows, filtered by CallpipeBatchId, and saves a screenshot", async () => {
    expect(childIds).toHaveLength(4); // three calls and the batch
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const query = encodeURIComponent(`CallpipeBatchId="${batchId}"`);
    const url = `${inject('stack').webUiUrl}/namespaces/${inject('stack').namespace}/workflows?query=${query}`;
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    for (const id of childIds) {
      await expect
        .poll(() => page.getByText(id, { exact: true }).count(), { timeout: 30_000 })
        .toBeGreaterThan(0);
    }
    // Only this batch: the table's links to workflow runs (`…/workflows/<id>/<runId>…`) are exactly its workflows.
    const hrefs = await page
      .locator('a[href*="/workflows/"]')
      .evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    const listed = [
      ...new Set(
        hrefs
          .map((h) => /\/workflows\/([^/?]+)\/[^/?]+/.exec(h)?.[1])
          .filter((id): id is string => !!id)
          .map((id) => decodeURIComponent(id)),
      ),
    ];
    expect(new Set(listed)).toEqual(new Set(childIds));

    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, 'web-ui-batch.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    await page.close();
  });
});
