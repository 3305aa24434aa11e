/**
 * The reasons step (activities/nlp/reasons.ts): the customer's words (or the summary) classified in one
 * request, the best classes with the model and its creation time; a call without text sends nothing;
 * a reason rule of the rule file reads the result.
 */
import { describe, expect, it } from 'vitest';
import { evaluateRule, type EvaluationContext } from '../../activities/insights/evaluate-rules.ts';
import { reasonsOutputSchema } from '../../schemas/result.ts';
import { reasonRuleSchema } from '../../schemas/rules.ts';
import { nlpSetup, utterance } from './nlp.helpers.ts';

const base = {
  callId: 'c1',
  timelineKey: 'timeline.json',
  outputKey: 'reasons.json',
  model: 'reasons-1',
  chars: 600,
};

describe('classifyReasons', () => {
  it("classifies the customer's words: best classes, model, creation time, one list per process", async () => {
    const { store, service, activities } = nlpSetup('timeline.json');
    const out = await activities.classifyReasons({ ...base, text: 'customer' });
    expect(out.status).toBe('ok');
    const doc = reasonsOutputSchema.parse(JSON.parse(await store.getText('reasons.json')));
    expect(doc.reasons).toMatchObject({
      top: [
        { class: 'billing', score: 0.8 },
        { class: 'outage', score: 0.2 },
      ],
      modelId: 'reasons-1',
      trainedAt: '2026-11-01T09:00:00+09:00',
      text: 'customer',
    });
    const sent = service.calls.find((c) => c.endpoint === 'classify')!.input as { text: string };
    // The customer's utterances only: not the agent's greeting.
    expect(sent.text).toContain('請求書の件で電話しました');
    expect(sent.text).not.toContain('佐藤');
    await activities.classifyReasons({ ...base, text: 'customer', outputKey: 'again.json' });
    expect(service.count('listModels')).toBe(1);
    expect(service.count('classify')).toBe(2);
  });

  it('classifies the summary when asked; a call with no text sends nothing', async () => {
    const { store, service, activities } = nlpSetup('timeline.json');
    store.objects.set(
      'summary.json',
      JSON.stringify({
        step: 'summary',
        callId: 'c1',
        text: '回線がつながらない件',
        mode: 'extract-cc',
        levels: 1,
        windows: 1,
        documentChars: 10,
        cost: { requests: 1, retries: 0, bytesSent: 1, bytesReceived: 1 },
      }),
    );
    await activities.classifyReasons({ ...base, text: 'summary', summaryKey: 'summary.json' });
    const sent = service.calls.find((c) => c.endpoint === 'classify')!.input as { text: string };
    expect(sent.text).toBe('回線がつながらない件');
    const silent = nlpSetup('t.json', [utterance(0, 'customer', 0, 1, '〈不明〉')]);
    await silent.activities.classifyReasons({ ...base, timelineKey: 't.json', text: 'customer' });
    const doc = reasonsOutputSchema.parse(JSON.parse(await silent.store.getText('reasons.json')));
    expect(doc.reasons).toBeNull();
    expect(silent.service.calls).toEqual([]);
  });
});

describe('reason rules', () => {
  const ctx = (reasons?: { class: string; score: number }) =>
    ({
      call: {
        audio: { durationSeconds: 60 },
        speakers: ['agent', 'customer'],
        utterances: [],
        ...(reasons ? { reasons: { top: [reasons] } } : {}),
      },
    }) as unknown as EvaluationContext;
  const rule = reasonRuleSchema.parse({ kind: 'reason', classes: ['billing'], minScore: 0.5 });

  it('hold when the best reason is one of the classes with at least the score', () => {
    expect(evaluateRule(rule, ctx({ class: 'billing', score: 0.7 }))).toEqual({
      held: true,
      points: [{ start: 0, end: 60, utterance: null }],
    });
    expect(evaluateRule(rule, ctx({ class: 'billing', score: 0.4 })).held).toBe(false);
    expect(evaluateRule(rule, ctx({ class: 'outage', score: 0.9 })).held).toBe(false);
  });

  it('are unavailable on a call no model classified', () => {
    expect(evaluateRule(rule, ctx())).toEqual({ held: false, points: [], unavailable: 'call reasons' });
  });
});
