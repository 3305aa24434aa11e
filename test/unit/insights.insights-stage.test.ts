/**
 * The insights stage and publish (activities/insights/insights-activities.ts, storage/results.ts
 * publishResult): the call scored into a staged document, which publish embeds in result.json.
 */
import { describe, expect, it } from 'vitest';
import { createInsightsActivities } from '../../activities/insights/insights-activities.ts';
import { canonicalRules, parseRules } from '../../activities/insights/rule-file.ts';
import { createResultActivities } from '../../activities/storage/result-activities.ts';
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

describe('insights stage, then publish', () => {
  it('scores by the rule file into a staged document that publish reads: categories, scorecard, result.json', async () => {
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
    expect(published.categories).toEqual(['billing']);
    const b = store.withBucket('results-bucket');
    expect(b.writes.slice(-3)).toEqual([
      'results-bucket/out/call-1/transcript.vtt',
      'results-bucket/out/call-1/call.html',
      'results-bucket/out/call-1/result.json',
    ]);
    const result = JSON.parse(b.objects.get('out/call-1/result.json')!) as {
      rules: { digest: string };
      scorecard: { score: number };
    };
    expect(result.rules.digest).toBe(RULES.digest);
    expect(result.scorecard.score).toBe(2);
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
