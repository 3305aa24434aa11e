/**
 * Call insights on the demo's own calls (cli/commands/demo.ts DEMO_CALLS), shortened to a few minutes
 * each (the rules judge what the scripts place, not how long the call runs around it), processed on the
 * shared test stack with the shipped rule file: categories, scorecard and metrics checked against what the scripts
 * placed (activities/media/call-script.ts `scriptedCall`): a call without a greeting fails the greeting
 * question, a scripted hold is a hold of the scripted length ± 1 s, a scripted talk-over is an overlap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { outputLocation, resolveSource, submitRecording } from '../../cli/submit.ts';
import { DEMO_CALLS, ensureDemoCalls, type DemoCall } from '../../cli/commands/demo.ts';
import { scriptedCall, type ScriptedMoments } from '../../activities/media/call-script.ts';
import { defaultRules } from '../../activities/insights/rule-file.ts';
import { stackConfig } from '../helpers/stack.ts';
import { resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';

/** The demo's scenarios, at most a few minutes long: every scripted moment still fits (scriptedCall checks). */
const SHORT_SECONDS: Record<string, number> = {
  'sample-stereo-1h.m4a': 420,
  'sample-short-mono.wav': 95,
  'sample-long-mono.wav': 480,
};
const CALLS: DemoCall[] = DEMO_CALLS.map((c) => ({
  ...c,
  scenario: { ...c.scenario, durationSeconds: SHORT_SECONDS[c.name]! },
}));

let dir: string;
let pc: PipelineClient;
const calls = new Map<string, { doc: ResultDocument; moments: ScriptedMoments }>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-insights-'));
  pc = await connectPipeline(stackConfig());
  const paths = await ensureDemoCalls(dir, () => undefined, CALLS);
  const output = outputLocation(undefined, pc.config);
  const submitted = await Promise.all(
    paths.map(async (path) =>
      submitRecording(pc, await resolveSource(path, pc.store, pc.config), { output }),
    ),
  );
  for (const [i, s] of submitted.entries()) {
    const r = await s.handle.result();
    expect(r.status, r.reason).toBe('done');
    const doc = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(r.resultKey!)));
    calls.set(CALLS[i]!.name, { doc, moments: scriptedCall(CALLS[i]!.scenario).moments });
  }
}, 900_000);

afterAll(async () => {
  await pc?.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (name: string) => calls.get(name)!;
const category = (doc: ResultDocument, name: string) => doc.categories!.find((c) => c.name === name)!;
const answer = (doc: ResultDocument, id: string) => doc.scorecard!.answers.find((a) => a.id === id)!;

describe('call insights of the demo calls, with the shipped rules: categories and the scorecard', () => {
  it('are scored with the shipped rules: every category, and a scorecard whose score is its yes answers', () => {
    const { rules, digest } = defaultRules();
    for (const { doc } of calls.values()) {
      expect(doc.rules).toMatchObject({ name: rules.name, version: rules.version, digest });
      expect(doc.categories!.map((c) => c.name)).toEqual(rules.categories.map((c) => c.name));
      const yes = doc.scorecard!.answers.filter((a) => a.answer === 'yes').reduce((n, a) => n + a.weight, 0);
      expect(doc.scorecard!.score).toBe(yes);
    }
  });

  it('a call scripted without a greeting fails the greeting question; the others pass it', () => {
    const short = call('sample-short-mono.wav');
    expect(short.moments.greeting).toBe(false);
    expect(category(short.doc, 'greeting').matched).toBe(false);
    expect(answer(short.doc, 'greeting').answer).toBe('no');
    for (const name of ['sample-stereo-1h.m4a', 'sample-long-mono.wav']) {
      const { doc } = call(name);
      expect(answer(doc, 'greeting').answer, name).toBe('yes');
      // The greeting is the first utterance, within the first 30 s.
      expect(category(doc, 'greeting').points[0]!.start).toBeLessThan(30);
    }
  });
});

describe('call insights of the demo calls, with the shipped rules: scripted events', () => {
  it('a scripted hold is a hold of the scripted length ± 1 s, at the scripted time', () => {
    for (const name of ['sample-stereo-1h.m4a', 'sample-long-mono.wav']) {
      const { doc, moments } = call(name);
      const scripted = moments.hold!;
      const found = doc.metrics!.holds.filter((h) => Math.abs(h.start - scripted.start) < 1);
      expect(found, name).toHaveLength(1);
      expect(Math.abs(found[0]!.seconds - scripted.seconds), name).toBeLessThanOrEqual(1);
      expect(Math.abs(found[0]!.end - scripted.end), name).toBeLessThanOrEqual(1);
    }
    // 150 s is a long hold; 45 s is not.
    expect(category(call('sample-long-mono.wav').doc, 'long_hold').matched).toBe(true);
    expect(answer(call('sample-long-mono.wav').doc, 'short_holds').answer).toBe('no');
    expect(answer(call('sample-stereo-1h.m4a').doc, 'short_holds').answer).toBe('yes');
    // No hold scripted, none found: the hold question is not applicable and out of the maximum.
    expect(call('sample-short-mono.wav').doc.metrics!.holds).toEqual([]);
    expect(answer(call('sample-short-mono.wav').doc, 'short_holds').answer).toBe('na');
  });

  it('a scripted talk-over is an overlap of at least 1 s that the agent started', () => {
    const { doc, moments } = call('sample-stereo-1h.m4a');
    const scripted = moments.overlap!;
    expect(scripted.seconds).toBeGreaterThanOrEqual(1);
    const found = doc.metrics!.overlaps.filter((o) => o.start < scripted.end && o.end > scripted.start);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ interrupter: 'agent' });
    expect(Math.abs(found[0]!.seconds - scripted.seconds)).toBeLessThanOrEqual(0.3);
    expect(category(doc, 'agent_interrupted').matched).toBe(true);
    expect(answer(doc, 'no_interruption').answer).toBe('no');
    expect(doc.metrics!.bySpeaker.find((s) => s.speaker === 'agent')!.interruptions).toBeGreaterThanOrEqual(
      1,
    );
  });

  it('a scripted complaint is a complaint, and the apology question applies and is answered yes', () => {
    const { doc } = call('sample-stereo-1h.m4a');
    expect(category(doc, 'complaint').matched).toBe(true);
    expect(category(doc, 'apology').matched).toBe(true);
    expect(answer(doc, 'apology').answer).toBe('yes');
    // Without a complaint the apology question is left out of the maximum.
    for (const { doc: d } of calls.values()) {
      if (!category(d, 'complaint').matched) expect(answer(d, 'apology').answer).toBe('na');
      else expect(answer(d, 'apology').answer).toBe(category(d, 'apology').matched ? 'yes' : 'no');
    }
  });
});

describe('call insights of the demo calls, with the shipped rules: speakers and rule kinds', () => {
  it("the demo's mono calls come out with an agent and a customer told apart by voice", () => {
    for (const name of ['sample-short-mono.wav', 'sample-long-mono.wav']) {
      const { doc } = call(name);
      expect(doc.speakerRoles?.source, name).toBe('voices');
      expect(doc.speakerRoles?.inferred, name).toBe(true);
      expect(doc.speakers, name).toEqual(expect.arrayContaining(['agent', 'customer']));
      const bySpeaker = new Set(doc.metrics!.bySpeaker.map((s) => s.speaker));
      expect(bySpeaker.has('agent') && bySpeaker.has('customer'), name).toBe(true);
      // Nearly every utterance has a voice: `mixed` only where nothing could be told.
      const mixed = doc.utterances.filter((u) => u.speaker === 'mixed').length;
      expect(mixed / doc.utterances.length, name).toBeLessThan(0.05);
    }
  });

  it('every rule kind is evaluated on data the calls have, personal data from the redaction records', () => {
    // The shipped file uses every rule kind (test/unit/insights.rules.test.ts): none may lack its data.
    for (const [name, { doc }] of calls) {
      expect(
        doc.utterances.some((u) => (u.dialogActs ?? []).length > 0),
        name,
      ).toBe(true);
      for (const c of doc.categories!) expect(c.unavailable, `${name} ${c.name}`).toBeUndefined();
      // The personal data category holds exactly where redaction masked something the customer said.
      const customerMasks = doc.utterances.filter(
        (u) => u.speaker === 'customer' && (u.redactions ?? []).length > 0,
      );
      const personal = category(doc, 'personal_data');
      if (doc.speakers.length > 1) {
        expect(personal.matched, name).toBe(customerMasks.length > 0);
        expect(personal.points.map((p) => p.utterance)).toEqual(customerMasks.map((u) => u.index));
      }
    }
    // The call scripted with personal data has it found, by the customer.
    expect(category(call('sample-stereo-1h.m4a').doc, 'personal_data').matched).toBe(true);
    const stereo = call('sample-stereo-1h.m4a').doc;
    for (const m of ['silences', 'overlaps', 'holds'] as const)
      expect(stereo.metrics![m].length, m).toBeGreaterThan(0);
    const agent = stereo.metrics!.bySpeaker.find((s) => s.speaker === 'agent')!;
    expect(agent.speechRate).toBeGreaterThan(0);
    expect(agent.fillers).toBeGreaterThan(0);
    expect(agent.talkToListen).toBeGreaterThan(0);
    expect(stereo.metrics!.timeToFirstAgentSeconds).toBeLessThan(1);
  });
});
