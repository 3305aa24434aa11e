/**
 * Call reasons and transcript quality on the real stack (issue 40, "Done when"): calls scripted with a
 * reason are processed before any model exists; `callpipe reasons train` learns from their stored,
 * redacted results (callId,class lines) and prints the report the emulator computed; `callpipe rescore`
 * adds reasons to those calls; a held-out call processed with the model is classified right; the 11th
 * model is refused with the way out. A call of garbled utterances (misheard lines, unknown phrases) is
 * low quality and needs review, its scorecard marked unreliable; a clean call is not.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { outputLocation, resolveSource, submitRecording } from '../../cli/submit.ts';
import { REASON_LINES, scriptedCall, type ScriptedReason } from '../../activities/media/call-script.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { callOutputKeys } from '../../schemas/call-keys.ts';
import { reasonModelRecordSchema } from '../../schemas/reasons.ts';
import { resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';
import type { CallSpecOverrides } from '../../schemas/call-spec.ts';
import type { FixtureScript } from '../../schemas/synthetic-recording.ts';
import { callpipe as run } from '../helpers/cli.ts';
import { parseRules } from '../../activities/insights/rule-file.ts';
import { matchedCategories, scoreCall } from '../../activities/insights/score-call.ts';
import { stackConfig } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';

const env = () => inject('stackEnv');
const callpipe = (args: string[], extra: Record<string, string> = {}) => run(args, { ...env(), ...extra });

const REASONS: ScriptedReason[] = ['billing', 'outage', 'cancellation'];
const PER_REASON = 6;

let dir: string;
let pc: PipelineClient;
const prefix = `reasons-${runId()}/`;
let out: ReturnType<typeof outputLocation>;
const labelled: { callId: string; reason: ScriptedReason }[] = [];

async function processCall(name: string, script: FixtureScript, extra?: CallSpecOverrides) {
  const path = join(dir, name);
  await renderFixture(script, path, { sampleRate: 8000 });
  const source = await resolveSource(path, pc.store, pc.config);
  const submitted = await submitRecording(pc, source, { output: out, ...(extra ? { extra } : {}) });
  return submitted;
}

async function resultOf(callId: string): Promise<ResultDocument> {
  const key = callOutputKeys(out, callId).result;
  return resultDocumentSchema.parse(JSON.parse(await pc.store.withBucket(out.bucket).getText(key)));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-reasons-'));
  pc = await connectPipeline(stackConfig());
  out = outputLocation(`s3://${pc.config.s3.bucket}/${prefix}`, pc.config);
  const runs = [];
  for (const reason of REASONS) {
    for (let i = 0; i < PER_REASON; i++) {
      const { script } = scriptedCall({ durationSeconds: 45, stereo: true, seed: 500 + i * 13, reason });
      runs.push(processCall(`${reason}-${i}.wav`, script).then((s) => ({ s, reason })));
    }
  }
  for (const { s, reason } of await Promise.all(runs)) {
    const done = await s.handle.result();
    expect(done.status, done.reason).toBe('done');
    labelled.push({ callId: done.callId, reason });
  }
}, 900_000);

afterAll(async () => {
  await pc?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A rule file's classifier rule on the customer: rescore classifies the stored calls' customer lines
 * (processed before the model existed) and scores the rule on them.
 */
async function expectLinesRescored(modelId: string) {
  const lineRules = join(dir, 'lines.yaml');
  writeFileSync(
    lineRules,
    `format: 1\nname: lines\nversion: '1'\ncategories:\n  - { name: outage_line, rules: [{ kind: classifier, model: ${modelId}, class: outage, speaker: customer, above: 0.4 }] }\n`,
  );
  const lined = await callpipe(['rescore', `s3://${out.bucket}/${prefix}`, '--rules', lineRules, '--json']);
  expect(lined.code, lined.stderr).toBe(0);
  expect(JSON.parse(lined.stdout)).toMatchObject({ updated: labelled.length, failed: 0 });
  for (const l of labelled) {
    const doc = await resultOf(l.callId);
    const said = doc.utterances.filter((u) => u.speaker === 'customer' && u.text.trim() !== '');
    expect(said.length, l.callId).toBeGreaterThan(0);
    for (const u of said) expect(Object.keys(u.lineClasses![modelId]!).sort()).toEqual([...REASONS].sort());
    // The result counts what the rescore sent: one request per distinct line (none before the rule).
    const lines = new Set(said.map((u) => (u.cleanedText ?? u.text).trim()).filter((text) => text !== ''));
    expect(doc.processing.requests.lineClasses?.requests, l.callId).toBe(lines.size);
    const category = doc.categories!.find((c) => c.name === 'outage_line')!;
    expect(category.unavailable, l.callId).toBeUndefined();
    if (l.reason === 'outage') expect(category.matched, l.callId).toBe(true);
  }
}

describe('call reasons and transcript quality: reasons', () => {
  it('trains from stored results, rescore adds reasons, a held-out call is classified right', async () => {
    const before = await resultOf(labelled[0]!.callId);
    expect(before.reasons).toBeUndefined();
    const labels = join(dir, 'labels.csv');
    writeFileSync(labels, `callId,class\n${labelled.map((l) => `${l.callId},${l.reason}`).join('\n')}\n`);
    const trained = await callpipe([
      'reasons',
      'train',
      labels,
      '--out',
      `s3://${out.bucket}/${prefix}`,
      '--json',
    ]);
    expect(trained.code, trained.stderr).toBe(0);
    const record = reasonModelRecordSchema.parse(JSON.parse(trained.stdout));
    expect(record).toMatchObject({
      status: 'completed',
      text: 'customer',
      lines: REASONS.length * PER_REASON,
    });
    // The report printed and stored is the one the service (the emulator) computed.
    const status = await callpipe(['reasons', 'status', record.modelId, '--json']);
    expect(JSON.parse(status.stdout)).toEqual({ model_status: 'completed', report: record.report });
    const stored = await pc.store.withBucket(out.bucket).getText(`${prefix}reasons/${record.modelId}.json`);
    expect(reasonModelRecordSchema.parse(JSON.parse(stored)).report).toEqual(record.report);
    expect(record.report.accuracy).toBeGreaterThanOrEqual(0.9);

    const model = { CALLPIPE_REASONS_MODEL: record.modelId };
    const rescored = await callpipe(['rescore', `s3://${out.bucket}/${prefix}`, '--json'], model);
    expect(rescored.code, rescored.stderr).toBe(0);
    expect(JSON.parse(rescored.stdout)).toMatchObject({ updated: labelled.length, failed: 0 });
    for (const l of labelled) {
      const doc = await resultOf(l.callId);
      expect(doc.reasons, l.callId).toMatchObject({ modelId: record.modelId, text: 'customer' });
      expect(doc.reasons!.top[0]!.class, l.callId).toBe(l.reason);
      // Processed before the model: the one reasons request is the rescore's.
      expect(doc.processing.requests.reasons, l.callId).toMatchObject({ requests: 1 });
    }
    await expectLinesRescored(record.modelId);

    // A call none of the examples came from, processed with the model.
    const { script } = scriptedCall({ durationSeconds: 45, stereo: true, seed: 9001, reason: 'outage' });
    // Its customer's lines classified too (a rule file's classifier rule on the customer): one request
    // a distinct line, the agent's lines not sent.
    const held = await processCall('held-out.wav', script, {
      reasons: { model: record.modelId, text: 'customer', chars: 600 },
      lineClassifiers: [{ model: record.modelId, speaker: 'customer' }],
    });
    const done = await held.handle.result();
    expect(done.status, done.reason).toBe('done');
    const doc = await resultOf(done.callId);
    expect(doc.reasons!.top[0]!.class).toBe('outage');
    expect(doc.processing.requests.reasons).toMatchObject({ requests: expect.any(Number) });
    const customerLines = doc.utterances.filter((u) => u.speaker === 'customer' && u.text.trim() !== '');
    expect(customerLines.length).toBeGreaterThan(0);
    for (const u of customerLines)
      expect(Object.keys(u.lineClasses![record.modelId]!).sort()).toEqual([...REASONS].sort());
    expect(doc.utterances.filter((u) => u.speaker !== 'customer').every((u) => !u.lineClasses)).toBe(true);
    // One request per distinct line (a line said again shares its scores: unit-requests.ts).
    const distinctLines = new Set(customerLines.map((u) => (u.cleanedText ?? u.text).trim()));
    expect(doc.processing.requests.lineClasses!.requests).toBeGreaterThanOrEqual(distinctLines.size);
    const lineRule = parseRules(
      `format: 1\nname: t\nversion: '1'\ncategories:\n  - { name: outage_line, rules: [{ kind: classifier, model: ${record.modelId}, class: outage, speaker: customer, above: 0.4 }] }\n`,
      'lines.yaml',
    );
    expect(matchedCategories(scoreCall(doc, lineRule))).toEqual(['outage_line']);
    await callpipe(['reasons', 'delete', record.modelId]);
  });

  it('refuses the 11th model with the way out, before uploading', async () => {
    const file = join(dir, 'lines.csv');
    const lines = REASONS.flatMap((r) => REASON_LINES[r].map((id) => `${r},line ${id} of ${r}`));
    writeFileSync(file, `${[...lines, ...lines].join('\n')}\n`);
    const listed = JSON.parse((await callpipe(['reasons', 'list', '--json'])).stdout) as unknown[];
    const made: string[] = [];
    for (let i = listed.length; i < 10; i++) {
      const r = await callpipe(['reasons', 'train', file, '--out', `s3://${out.bucket}/${prefix}`, '--json']);
      expect(r.code, r.stderr).toBe(0);
      made.push((JSON.parse(r.stdout) as { modelId: string }).modelId);
    }
    const refused = await callpipe(['reasons', 'train', file, '--out', `s3://${out.bucket}/${prefix}`]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('already holds 10 text classification models');
    expect(refused.stderr).toContain('callpipe reasons delete <model id>');
    for (const id of made) expect((await callpipe(['reasons', 'delete', id])).code).toBe(0);
  });
});

describe('call reasons and transcript quality: quality', () => {
  it('a call of garbled utterances is low quality and needs review; a clean call does not', async () => {
    // Customer lines misheard (401–406) and unknown ids (the placeholder), between clean agent lines.
    const customer = [401, 999, 402, 404, 998, 405, 406, 997].map((id, i) => ({ id, start: 4 + i * 5 }));
    const agent = [1, 4, 6, 11, 13, 14, 67].map((id, i) => ({ id, start: 1.5 + i * 6 }));
    const garbled = await processCall('garbled.wav', {
      background: 'silence',
      channels: [{ phrases: agent }, { phrases: customer }],
    });
    const done = await garbled.handle.result();
    expect(['done', 'partial'], done.reason).toContain(done.status);
    const doc = await resultOf(done.callId);
    expect(doc.transcriptQuality).toMatchObject({ level: 'low', needsReview: true });
    expect(doc.transcriptQuality!.checked).toBeGreaterThanOrEqual(6);
    expect(doc.scorecard?.unreliable).toBe(true);
    const misheard = doc.utterances.find((u) => u.text.includes('声急所'))!;
    expect(misheard.misrecognition!.candidates[0]).toMatchObject({
      text: '声急所',
      corrections: [{ text: '請求書' }],
    });
    // Corrections are beside the text, never in it.
    expect(misheard.text).toContain('声急所');
    const page = await pc.store.withBucket(out.bucket).getText(callOutputKeys(out, done.callId).page);
    expect(page).toContain('needs review');
    expect(page).toContain('声急所 → 請求書');

    const clean = await resultOf(labelled[0]!.callId);
    expect(clean.transcriptQuality).toMatchObject({ level: 'high', needsReview: false, checked: 0 });
    expect(clean.scorecard?.unreliable).toBeUndefined();
  });
});
