/**
 * The insights stage and publish (activities/insights/insights-stage.ts, storage/results.ts
 * publishResult) write the same call outputs as the single write of runs recorded before them
 * (writeResult, which scores as it writes): result.json byte for byte but for its two times,
 * transcript.vtt and the call page.
 */
import { describe, expect, it } from 'vitest';
import { createInsightsActivities } from '../../activities/insights/insights-stage.ts';
import { canonicalRules, parseRules } from '../../activities/insights/rule-file.ts';
import { createResultActivities } from '../../activities/storage/results.ts';
import { callOutputKeys, outputLocationOf } from '../../schemas/call-keys.ts';
import { callInsightsDocumentSchema } from '../../schemas/insights.ts';
import { MemoryStore, SAMPLE_UTTERANCES, timeline } from './nlp.helpers.ts';
import { facts, fillers } from './result.helpers.ts';

const RULES = parseRules(
  'format: 1\nname: mine\nversion: "7"\ncategories:\n  - name: billing\n    rules: [{ kind: phrase, terms: [請求書] }]\n  - name: never\n    rules: [{ kind: phrase, terms: [存在しない言葉] }]\nscorecard:\n  name: basics\n  questions:\n    - { id: billing, text: billing named?, weight: 2, answer: { category: billing } }\n',
  'mine.yaml',
);

function staged(): MemoryStore {
  const store = new MemoryStore('staging');
  store.objects.set('s/timeline.json', JSON.stringify(timeline(SAMPLE_UTTERANCES)));
  store.objects.set('s/fillers.json', JSON.stringify(fillers));
  store.objects.set('in/rules/abc/rules.json', canonicalRules(RULES.rules));
  return store;
}

const input = {
  callId: 'call-1',
  output: callOutputKeys(outputLocationOf('s3://results-bucket/out', 'staging'), 'call-1'),
  timelineKey: 's/timeline.json',
  fillersKey: 's/fillers.json',
  stepFailures: [{ step: 'summary', reason: 'summary: invalid' }],
  facts,
};

/** result.json's text with its two times (write, scoring) blanked: everything else must match. */
function timeless(text: string): string {
  const doc = JSON.parse(text) as { writtenAt: string; rules: { scoredAt: string } };
  doc.writtenAt = '';
  doc.rules.scoredAt = '';
  return JSON.stringify(doc, null, 2);
}

describe('insights stage, then publish', () => {
  it('writes what the single scoring write wrote: result.json (but its times), transcript.vtt, call page', async () => {
    const before = staged();
    const old = await createResultActivities({ store: before }).writeResult({
      ...input,
      rulesKey: 'in/rules/abc/rules.json',
    });

    const store = staged();
    const { computeInsights } = createInsightsActivities({ store });
    const insights = await computeInsights({
      callId: 'call-1',
      timelineKey: 's/timeline.json',
      fillersKey: 's/fillers.json',
      durationSeconds: facts.audio.durationSeconds,
      rulesKey: 'in/rules/abc/rules.json',
      outputKey: 's/insights.json',
    });
    expect(insights).toEqual({ insightsKey: 's/insights.json', categories: ['billing'] });
    const document = callInsightsDocumentSchema.parse(store.json('s/insights.json'));
    expect(document.rules).toMatchObject({ name: 'mine', version: '7', digest: RULES.digest });
    expect(document.scorecard).toMatchObject({ score: 2, max: 2 });

    const published = await createResultActivities({ store }).publishResult({
      ...input,
      insightsKey: insights.insightsKey,
    });
    expect(published).toEqual(old);
    const a = before.withBucket('results-bucket');
    const b = store.withBucket('results-bucket');
    expect(b.writes.slice(-3)).toEqual(a.writes.slice(-3)); // result.json last, as before
    expect(timeless(b.objects.get('out/call-1/result.json')!)).toBe(
      timeless(a.objects.get('out/call-1/result.json')!),
    );
    expect(b.objects.get('out/call-1/transcript.vtt')).toBe(a.objects.get('out/call-1/transcript.vtt'));
    const page = (text: string | undefined) => text?.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '');
    expect(page(b.objects.get('out/call-1/call.html'))).toBe(page(a.objects.get('out/call-1/call.html')));
  });

  it("publish refuses another call's insights document, writing nothing", async () => {
    const store = staged();
    await createInsightsActivities({ store }).computeInsights({
      callId: 'call-2',
      timelineKey: 's/timeline.json',
      durationSeconds: 100,
      outputKey: 's/insights.json',
    });
    await expect(
      createResultActivities({ store }).publishResult({ ...input, insightsKey: 's/insights.json' }),
    ).rejects.toThrow(/not call call-1's/);
    expect(store.withBucket('results-bucket').writes).toEqual([]);
  });
});
