/**
 * Transcript quality: the quality step checks only the low-confidence utterances (one request each) and
 * keeps their misrecognition; the call's quality is duration-weighted; a call below the review level has
 * its scorecard marked unreliable; the call page marks low-quality utterances and shows corrections beside
 * the text, never in it; the night report counts low-quality calls per agent.
 */
import { describe, expect, it } from 'vitest';
import { renderCallPage } from '../../activities/pages/call-page.ts';
import { nightQuality, qualitySection } from '../../activities/pages/night-quality.ts';
import { reviewed } from '../../activities/storage/result-document.ts';
import { qualityOutputSchema, type ScorecardResult } from '../../schemas/result.ts';
import type { TableRow } from '../../schemas/tables.ts';
import { transcriptQualityOf } from '../../schemas/transcript-quality.ts';
import { resultFixture } from '../helpers/result-fixture.ts';
import { nlpSetup, utterance } from './nlp.helpers.ts';

const settings = { checkBelow: 0.6, reviewBelow: 0.75 };
const sure = (u: ReturnType<typeof utterance>, confidence: number) => ({ ...u, confidence });

describe('checkQuality', () => {
  it('checks the utterances below the confidence threshold only, and keeps what the service found', async () => {
    const { store, service, activities } = nlpSetup('t.json', [
      sure(utterance(0, 'agent', 0, 3, 'お電話ありがとうございます。'), 0.95),
      sure(utterance(1, 'customer', 3, 6, 'えーっと、声急所のことで電話したんですが。'), 0.45),
      sure(utterance(2, 'customer', 6, 8, '〈不明〉'), 0.1),
    ]);
    const out = await activities.checkQuality({
      callId: 'c',
      timelineKey: 't.json',
      outputKey: 'q.json',
      ...settings,
    });
    expect(out).toMatchObject({ status: 'ok', cost: { requests: 2 } });
    expect(service.count('detectMisrecognition')).toBe(2);
    const doc = qualityOutputSchema.parse(JSON.parse(await store.getText('q.json')));
    expect(doc.utterances.map((u) => u.index)).toEqual([1, 2]);
    expect(doc.utterances[0]!.misrecognition).toEqual({
      score: 0.85,
      candidates: [
        { begin: 5, end: 8, text: '声急所', score: 0.85, corrections: [{ text: '請求書', score: 0.8 }] },
      ],
    });
    expect(doc.utterances[1]!.misrecognition.candidates[0]).toMatchObject({
      text: '〈不明〉',
      corrections: [],
    });
  });
});

describe('transcript quality', () => {
  const clean = [0, 1, 2, 3].map((i) => ({ start: i * 5, end: i * 5 + 4, confidence: 0.95 }));

  it('is high for a clean call and low, needing review, for a garbled one (duration-weighted)', () => {
    expect(transcriptQualityOf(clean, settings)).toMatchObject({
      score: 0.95,
      level: 'high',
      needsReview: false,
    });
    const garbled = [
      ...clean.slice(0, 2),
      { start: 10, end: 14, confidence: 0.1, misrecognition: { score: 0.9, candidates: [] } },
      { start: 15, end: 19, confidence: 0.45, misrecognition: { score: 0.85, candidates: [] } },
    ];
    const q = transcriptQualityOf(garbled, settings);
    expect(q).toMatchObject({ level: 'low', needsReview: true, checked: 2, lowUtterances: 2 });
    expect(q.score).toBeCloseTo((0.95 * 4 * 2 + 0.01 * 4 + 0.45 * 0.15 * 4) / 16, 3);
    // A long clean stretch outweighs a short doubtful one.
    const short = [
      { start: 0, end: 60, confidence: 0.95 },
      { start: 60, end: 61, confidence: 0.1 },
    ];
    expect(transcriptQualityOf(short, settings).level).toBe('high');
  });

  it("marks a reviewed call's scorecard unreliable, and only then", () => {
    const card: ScorecardResult = { name: 's', score: 1, max: 2, normalized: 0.5, answers: [] };
    const low = transcriptQualityOf([{ start: 0, end: 1, confidence: 0.1 }], settings);
    expect(reviewed(card, low)).toEqual({ ...card, unreliable: true });
    expect(reviewed({ ...card, unreliable: true }, transcriptQualityOf(clean, settings))).toEqual(card);
    expect(reviewed(null, low)).toBeNull();
  });
});

describe('pages', () => {
  it('the call page marks low-quality utterances, shows corrections beside the text and "needs review"', () => {
    const doc = resultFixture();
    doc.utterances[1] = {
      ...doc.utterances[1]!,
      text: '声急所の件です',
      confidence: 0.45,
      misrecognition: {
        score: 0.85,
        candidates: [
          { begin: 0, end: 3, text: '声急所', score: 0.85, corrections: [{ text: '請求書', score: 0.8 }] },
        ],
      },
    };
    doc.transcriptQuality = transcriptQualityOf(
      doc.utterances.map((u, i) => (i === 1 ? u : { ...u, confidence: 0.1 })),
      settings,
    );
    const card: NonNullable<typeof doc.scorecard> = {
      name: 's',
      score: 1,
      max: 1,
      normalized: 1,
      answers: [],
    };
    doc.scorecard = reviewed(card, doc.transcriptQuality);
    const html = renderCallPage(doc, { timeZone: 'UTC' });
    expect(html).toMatch(/<tr class="utt low-quality" id="u1"/);
    expect(html).toContain('<td class="text">声急所の件です<div class="corrections">');
    expect(html).toContain('声急所 → 請求書');
    expect(html).toContain('needs review');
    expect(html).toContain('class="unreliable"');
  });

  it('the night report counts low-quality calls and those needing review, per agent and per line', () => {
    const rows = [
      { agent: 'a1', transcript_level: 'low', needs_review: true, metadata: { line: 'trunk-2' } },
      { agent: 'a1', transcript_level: 'high', needs_review: false, metadata: { line: 'trunk-1' } },
      { agent: 'a2', transcript_level: 'low', needs_review: false, metadata: { line: 'trunk-2' } },
      { agent: 'a2', transcript_level: 'medium', needs_review: false, metadata: {} },
      { agent: 'a2', transcript_level: null, needs_review: null, metadata: { line: 'trunk-1' } },
    ] as unknown as TableRow[];
    const { all, byAgent, byLine } = nightQuality(rows);
    expect(all).toEqual({ calls: 4, low: 2, review: 1 });
    expect(byAgent.get('a1')).toEqual({ calls: 2, low: 1, review: 1 });
    expect(byAgent.get('a2')).toEqual({ calls: 2, low: 1, review: 0 });
    expect(byLine.get('trunk-2')).toEqual({ calls: 2, low: 2, review: 1 });
    expect(byLine.get('trunk-1')).toEqual({ calls: 1, low: 0, review: 0 });
    expect(byLine.get('')).toEqual({ calls: 1, low: 0, review: 0 });
    // The card: a table per agent and per line, the worst line first; calls without a line not listed.
    const html = qualitySection(rows);
    expect(html).toContain('<b id="low-quality-share">50.0 %</b> of 4 calls');
    const byLineTable = html.slice(html.indexOf('id="quality-by-line"'));
    expect(byLineTable.indexOf('data-line="trunk-2"')).toBeLessThan(
      byLineTable.indexOf('data-line="trunk-1"'),
    );
    expect(byLineTable).toContain('<td>trunk-2</td><td class="num">2</td><td class="num">100.0 %</td>');
    expect(html).not.toContain('data-line=""');
    expect(html).toContain('id="quality-by-agent"');
  });
});
