/**
 * Users' patterns and rule files on the real stack (Temporal, S3, an emulator, a worker process of every
 * queue, as workers/all.ts runs them). A redaction pattern `(a+)+$` held a worker on JavaScript's
 * backtracking engine for minutes over a call whose text held a long run of `a`: here the same rules
 * file, loaded by a worker process, redacts such a call as the pattern says and the call is done. A 60-MB
 * rule file is refused by the command with the reason before anything starts, and so is a redaction
 * rules file with a pattern the linear-time engine does not run (with its line).
 *
 * The call's text comes from an emulator of this test's own whose phrasebook holds the hostile lines
 * (docs/design.md, "Synthetic recordings the emulator can recognize").
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../emulator/server.ts';
import { loadPhrasebook } from '../../emulator/phrasebook.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { taskQueues, type Config } from '../../schemas/config.ts';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { resolveSource, submitRecording } from '../../cli/submit.ts';
import { resultDocumentSchema } from '../../schemas/result.ts';
import { childWorkers, uniquePrefix, withPrefix } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { callpipe } from '../helpers/cli.ts';
import { sizeText } from '../../activities/user-file.ts';
import { TEST_DEADLINE_SLACK_MS } from './global-setup.ts';
import type { ManagedProcess } from '../../cli/stack/process.ts';

const SPEED = 100;
const RUN = 'a'.repeat(10_000);
/** Phrase ids of this test's phrasebook, beyond the default's. */
const LONG_RUN = 901;
const CODE = 902;
const PHRASES: Record<string, string> = {
  [LONG_RUN]: `${RUN}です`,
  // One `a`: a value of one character is not looked for elsewhere in the call (masking.ts), so what is
  // masked is exactly what the pattern matched.
  [CODE]: 'コードはa',
};

let dir: string;
let pc: PipelineClient;
let emulator: RunningEmulator;
let workers: ManagedProcess | undefined;
let config: Config;
let recording: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-hostile-patterns-'));
  pc = await connectPipeline(stackConfig());
  const book = Object.fromEntries([...loadPhrasebook()].map(([id, text]) => [String(id), text]));
  emulator = await startEmulator({
    port: 0,
    speed: SPEED,
    phrasebook: { ...book, ...PHRASES },
    deadlineSlackMs: TEST_DEADLINE_SLACK_MS,
  });
  config = withPrefix(stackConfig(), uniquePrefix('hostile-patterns'), {
    baseUrl: emulator.baseUrl,
    authUrl: emulator.authUrl,
    clientId: emulator.clientId,
    clientSecret: emulator.clientSecret,
    domainId: emulator.domainId,
    speed: SPEED,
  });
  recording = join(dir, 'long-run.wav');
  // Stereo: the agent greets; the customer says the run of 10,000 `a` (and です), then a code ending in `a`.
  await renderFixture(
    {
      background: 'silence',
      channels: [
        { phrases: [{ id: 1, start: 0.5 }] },
        {
          phrases: [
            { id: LONG_RUN, start: 3 },
            { id: CODE, start: 6 },
          ],
        },
      ],
    },
    recording,
  );
}, 180_000);

afterAll(async () => {
  await workers?.stop();
  await emulator?.close();
  await pc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('hostile patterns and rule files', () => {
  it('(a+)+$ over a run of 10,000 a: a worker process of every queue redacts the call as the pattern says', async () => {
    const rules = join(dir, 'redaction-rules.json');
    writeFileSync(rules, JSON.stringify({ patterns: [{ kind: 'contract', regex: '(a+)+$' }] }));
    workers = childWorkers(config, join(dir, 'workers.log'), { CALLPIPE_REDACTION_RULES: rules });
    await workers.start();

    const source = await resolveSource(recording, pc.store, pc.config);
    const submitted = await submitRecording(pc, source, {
      output: { bucket: pc.config.s3.bucket, prefix: `hostile-patterns/${config.temporal.taskQueuePrefix}/` },
      redo: true,
      extra: { queues: taskQueues(config), pacingSpeed: SPEED },
    });
    const result = await submitted.handle.result();
    expect(result.resultKey, result.reason).toBeDefined();
    const doc = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(result.resultKey!)));
    // The call finished with every text: redaction, the insights and every other step ran. Only the
    // summary may fail alone (non-fatal): one sentence of 10,000 letters cannot be summarized shorter.
    expect(doc.stepFailures.filter((f) => f.step !== 'summary')).toEqual([]);
    expect(result.status).toBe(doc.stepFailures.length === 0 ? 'done' : 'partial');
    const customer = doc.utterances.filter((u) => u.speaker === 'customer').map((u) => u.text);
    // `$` is the end of the customer's stream: the run inside the first line is followed by です and
    // stays; the second line's run ends the stream and is masked.
    expect(customer).toEqual([`${RUN}です`, 'コードは[contract]']);
    expect(doc.redaction?.counts.contract).toBe(1);
  });

  it('the command refuses a 60-MB rule file, and a redaction pattern the engine cannot run, before anything starts', async () => {
    const env = inject('stackEnv');
    // 4 million terms, about 60 MB, written in slices.
    const big = join(dir, 'huge-rules.json');
    writeFileSync(
      big,
      '{"format":1,"name":"huge","version":"1","categories":[{"name":"huge","rules":[{"kind":"phrase","terms":[',
    );
    const slice = Array.from({ length: 100_000 }, (_, i) =>
      JSON.stringify(`term-${String(i).padStart(8, '0')}`),
    );
    for (let n = 0; n < 40; n++) appendFileSync(big, `${n > 0 ? ',' : ''}${slice.join(',')}`);
    appendFileSync(big, ']}]}]}');
    const size = statSync(big).size;
    expect(size).toBeGreaterThan(60_000_000);
    const out = `s3://${pc.config.s3.bucket}/hostile-patterns/refused/`;
    const huge = await callpipe(['process', recording, '--rules', big, '--out', out, '--detach'], env);
    expect(huge.code).not.toBe(0);
    expect(huge.stderr).toContain(
      `rules: rules file ${big}: the file is ${sizeText(size)}, more than the 2 MiB callpipe reads (docs/input-limits.md)`,
    );
    expect(huge.stdout).not.toMatch(/started/);

    const lookahead = join(dir, 'lookahead-rules.json');
    writeFileSync(
      lookahead,
      '{\n  "patterns": [\n    { "kind": "member", "regex": "\\\\d+(?=円)" }\n  ]\n}\n',
    );
    const refused = await callpipe(['process', recording, '--out', out, '--detach'], {
      ...env,
      CALLPIPE_REDACTION_RULES: lookahead,
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `redaction rules ${lookahead}: line 3: patterns.0.regex: uses lookahead or lookbehind`,
    );
    expect(refused.stdout).not.toMatch(/started/);
    expect((await pc.store.listPage('hostile-patterns/refused/')).objects).toEqual([]);
  });
});
