/**
 * The pages' pure parts: redaction markers and escaping in the transcript, silence and overlap
 * intervals of the timeline, the night report's processing facts, and pages that carry no way out of
 * their own script blocks whatever the transcript says.
 */
import { describe, expect, it } from 'vitest';
import { markedText, renderCallPage, silencesAndOverlaps } from '../../activities/pages/call-page.ts';
import { nightFacts, renderNightReport } from '../../activities/pages/night-report.ts';
import type { ResultUtterance } from '../../schemas/result.ts';
import { resultFixture } from '../helpers/result-fixture.ts';

const utterance = (text: string, redactions?: unknown[]) =>
  ({ ...resultFixture().utterances[0]!, text, ...(redactions ? { redactions } : {}) }) as ResultUtterance;

describe('markedText', () => {
  it('wraps each redaction mask in a marker naming its kind, and escapes the rest', () => {
    const u = utterance('<b>お名前は[氏名]、電話は[電話番号]です', [
      { kind: 'phone', begin: 15, end: 21, source: 'pattern' },
      { kind: 'name', begin: 7, end: 11, source: 'ne' },
    ]);
    expect(markedText(u)).toBe(
      '&lt;b&gt;お名前は<mark class="redacted" title="redacted: name" data-kind="name">[氏名]</mark>、電話は' +
        '<mark class="redacted" title="redacted: phone" data-kind="phone">[電話番号]</mark>です',
    );
  });

  it('ignores records outside the text or overlapping an earlier one', () => {
    const u = utterance('abc', [
      { kind: 'x', begin: 1, end: 9 },
      { kind: 'y', begin: 2, end: 1 },
    ]);
    expect(markedText(u)).toBe('abc');
  });
});

describe('silencesAndOverlaps', () => {
  it('finds when nobody talks and when two talk at once, to the end of the call', () => {
    const spans = [
      { start: 1, end: 4 },
      { start: 3, end: 6 },
      { start: 10, end: 12 },
    ];
    expect(silencesAndOverlaps(spans, 15)).toEqual({
      silences: [
        [0, 1],
        [6, 10],
        [12, 15],
      ],
      overlaps: [[3, 4]],
    });
  });
});

describe('pages: call page', () => {
  it('marks inferred speakers and shows the role evidence in words', () => {
    const doc = resultFixture({ utterances: 4 });
    const html = renderCallPage(
      {
        ...doc,
        speakerRoles: {
          source: 'voices',
          inferred: true,
          decision: 'inferred',
          swapped: false,
          mode: 'evidence',
          confidence: 'high',
          margin: 5,
          direction: null,
          speakers: [
            {
              speaker: 'agent',
              role: 'agent',
              track: 0,
              voice: 0,
              configured: null,
              utterances: 2,
              agentScore: 5,
              evidence: [],
              words: 'opening-greeting ×1 at 0:01 (agent)',
            },
          ],
          separation: { voices: 2, joined: 1, unassigned: 0, cpuMs: 3 },
          summary: '2 voices told apart by sound; named by what they say (margin 5 points)',
        },
      },
      { timeZone: 'UTC' },
    );
    expect(html).toContain('<div id="roles" data-decision="inferred">');
    expect(html).toContain('opening-greeting ×1 at 0:01 (agent)');
    expect(html).toContain('inferred from voices');
    expect(html).toContain('1 utterance(s) holding two voices');
    expect(html).toContain('class="who inferred"');
  });

  it('a transcript that says </script> cannot end the page’s script blocks', () => {
    const result = resultFixture();
    result.utterances[0]!.text = '</script><script>alert(1)</script>';
    const html = renderCallPage(result, { timeZone: 'UTC' });
    expect(html).not.toContain('<script>alert(1)');
    expect(html.match(/<script\b/g)!.length).toBe(html.match(/<\/script>/g)!.length);
  });

  it("a one-hour call's page stays small: 720 utterances in under 1 MB, the inlined library and scripts under 100 KB", () => {
    const hour = Buffer.byteLength(
      renderCallPage(resultFixture({ utterances: 720, slot: 5 }), { timeZone: 'UTC' }),
    );
    const empty = Buffer.byteLength(renderCallPage(resultFixture({ utterances: 0 }), { timeZone: 'UTC' }));
    expect(hour).toBeLessThan(1_000_000);
    expect(empty).toBeLessThan(100_000);
  });
});

describe('pages: night report', () => {
  it('the night report counts calls by outcome, audio hours and requests per audio hour', () => {
    const rows = [
      { callId: 'a', source: 's3://b/a.wav', status: 'done' as const, durationSeconds: 1800, requests: 300 },
      {
        callId: 'b',
        source: 's3://b/b.wav',
        status: 'partial' as const,
        durationSeconds: 1800,
        requests: 100,
      },
      { callId: 'c', source: 's3://b/c.wav', status: 'failed' as const, reason: 'not audio', stage: 'probe' },
    ];
    const report = { rows, startedAt: '2026-03-01T00:00:00Z', finishedAt: '2026-03-01T00:30:00Z' };
    expect(nightFacts(report)).toEqual({
      calls: 3,
      byStatus: { done: 1, partial: 1, failed: 1 },
      audioHours: 1,
      wallSeconds: 1800,
      requests: 400,
      requestsPerAudioHour: 400,
    });
    const html = renderNightReport(
      {
        ...report,
        batchId: 'night-1',
        source: 's3://b/',
        output: 's3://b/results/',
        status: 'done',
        runs: 1,
        counters: {} as never,
        audioHours: 1,
      },
      new Map([
        ['a', { roles_decision: 'swapped', speakers_inferred: false }],
        ['b', { roles_decision: 'inferred', speakers_inferred: true }],
      ]),
      { timeZone: 'UTC', pageHref: (id) => `../../${id}/call.html` },
    );
    expect(html).toMatch(/<div class="fact" id="fact-roles-swapped"><b>1<\/b>/);
    expect(html).toMatch(/<div class="fact" id="fact-speakers-inferred"><b>1<\/b>/);
    expect(html).toContain('<a href="../../a/call.html">a</a>');
    expect(html).not.toContain('href="../../c/call.html"');
    expect(html).toContain('not audio');
  });
});
