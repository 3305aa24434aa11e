/**
 * A call event's data (activities/events/event-data.ts) from a result.json: the ids, keys, outcome,
 * length, matched categories, the alerts the rule file marks (most severe first), the scorecard's totals
 * and the sentiment summary — and no text of the call (utterances, summary, keywords) nor its source's key.
 */
import { describe, expect, it } from 'vitest';
import { alertsOf, completedCallData, failedCallData } from '../../activities/events/event-data.ts';
import { structuredJson } from '../../activities/events/cloud-event.ts';
import { defaultRules } from '../../activities/insights/rule-file.ts';
import { callEventDataSchema } from '../../schemas/events.ts';
import type { CategoryResult } from '../../schemas/result.ts';
import { resultFixture } from '../helpers/result-fixture.ts';

const category = (name: string, matched: boolean): CategoryResult => ({ name, matched, points: [] });
const run = { workflowId: 'call-a', runId: 'run-1', batchId: 'night-1' };
const keys = { bucket: 'out', resultKey: 'results/call-a/result.json', pageKey: 'results/call-a/call.html' };

describe('call event data', () => {
  const { rules } = defaultRules();

  it('names the matched alert categories of the shipped rules, most severe first', () => {
    const categories = [
      category('greeting', true),
      category('complaint', true),
      category('customer_harassment', true),
      category('agent_ng_words', false),
    ];
    expect(alertsOf(categories, rules)).toEqual([
      { category: 'customer_harassment', severity: 'critical' },
      { category: 'complaint', severity: 'warning' },
    ]);
    expect(alertsOf([category('greeting', true), category('complaint', false)], rules)).toEqual([]);
  });

  it('holds what result.json holds about the call, and none of its text', () => {
    const doc = resultFixture({ callId: 'call-a' });
    doc.categories = [category('complaint', true), category('greeting', false)];
    const data = callEventDataSchema.parse(completedCallData(doc, keys, rules, run));
    expect(data).toMatchObject({
      callId: 'call-a',
      batchId: 'night-1',
      outcome: doc.stepFailures.length ? 'partial' : 'done',
      ...keys,
      durationSeconds: doc.audio.durationSeconds,
      categories: ['complaint'],
      alerts: [{ category: 'complaint', severity: 'warning' }],
      workflowId: 'call-a',
      runId: 'run-1',
    });
    expect(data.sentiment?.overall.label).toBe(doc.sentiment!.overall.label);
    const line = structuredJson({
      id: 'evt_x',
      type: 'callpipe.call.completed',
      source: 's3://out/results/',
      subject: 'call-a',
      time: '2026-11-26T00:00:00.000Z',
      data,
    });
    for (const u of doc.utterances) expect(line).not.toContain(u.text);
    if (doc.summary) expect(line).not.toContain(JSON.stringify(doc.summary).slice(1, 20));
    expect(line).not.toContain(doc.source.key);
  });

  it('says why a call failed, from its error.json', () => {
    const data = failedCallData(
      {
        schemaVersion: 2,
        callId: 'call-b',
        source: resultFixture().source,
        stage: 'probe',
        reason: 'not a recording: no audio stream',
        writtenAt: '2026-11-26T00:00:00.000Z',
      },
      { bucket: 'out', errorKey: 'results/call-b/error.json' },
      undefined,
      run,
    );
    expect(callEventDataSchema.parse(data)).toMatchObject({
      outcome: 'failed',
      stage: 'probe',
      reason: 'not a recording: no audio stream',
      errorKey: 'results/call-b/error.json',
      durationSeconds: null,
      alerts: [],
    });
  });
});
