/**
 * What can differ between the Node lines `engines` allows, run on the second line (`npm test`'s
 * `node-line` project, on the pinned Node the main run does not use): the `callpipe` command on this
 * Node's type stripping, a recording rendered, probed and planned through ffmpeg, DuckDB's native module,
 * and Temporal's core bridge with the workflow bundle (the workflow project's global setup bundles the
 * workflows and starts a dev server; `test/workflow/events.test.ts` runs beside this file in the project).
 * Everything else is plain TypeScript the main run already checked.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { openTablesDatabase } from '../../cli/query/duckdb.ts';
import { sessionPlanSchema } from '../../schemas/plan.ts';

const run = promisify(execFile);
const CALLPIPE = fileURLToPath(new URL('../../bin/callpipe.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'node-line-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const callpipe = (...args: string[]) => run(process.execPath, [CALLPIPE, ...args], { maxBuffer: 16 << 20 });

describe(`on Node ${process.version}`, () => {
  it('the command runs on this Node itself, its TypeScript stripped of types', async () => {
    // `process.features.typescript` (Node 22.10+; not in the @types/node of the engines floor's types).
    expect((process.features as { typescript?: unknown }).typescript).toBeTruthy();
    const { stdout } = await callpipe('--help');
    expect(stdout).toMatch(/Usage: callpipe/);
    expect(stdout).toMatch(/\bprocess\b/);
  });

  it('renders, probes and plans a recording through ffmpeg', async () => {
    const wav = join(dir, 'call.wav');
    await callpipe('fixture', '--generate', '20', wav, '--seed', '3');
    const { stdout } = await callpipe('plan', wav);
    const plan = sessionPlanSchema.parse(JSON.parse(stdout));
    expect(plan.sessions.length).toBeGreaterThan(0);
    expect(plan.source.durationSeconds).toBeCloseTo(20, 0);
    expect(plan.sessions.at(-1)!.end).toBeLessThanOrEqual(plan.source.durationSeconds);
  });

  it("loads DuckDB's native module and answers a query over the documented tables", async () => {
    const db = await openTablesDatabase(() => [], 'Asia/Tokyo');
    try {
      const result = await db.query('SELECT count(*) AS n FROM calls');
      expect(result.rows).toEqual([{ n: 0 }]);
    } finally {
      db.close();
    }
  });
});
