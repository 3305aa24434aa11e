/**
 * Call reasons on the pages: the call page's reason (best classes, model), the night report's top
 * reasons with share, mean score and the change against the day before.
 */
import { describe, expect, it } from 'vitest';
import { renderCallPage } from '../../activities/pages/call-page.ts';
import { nightReasons, reasonsSection } from '../../activities/pages/night-reasons.ts';
import type { TableRow } from '../../schemas/tables.ts';
import { resultFixture } from '../helpers/result-fixture.ts';

const rows = (reasons: (string | null)[]): TableRow[] =>
  reasons.map(
    (reason, i) => ({ call_id: `c${i}`, reason, reason_score: reason ? 0.5 + i / 100 : null }) as TableRow,
  );

describe('call page', () => {
  it('shows the reason in the header and the best classes with the model', () => {
    const doc = {
      ...resultFixture(),
      reasons: {
        top: [
          { class: '請求', score: 0.82 },
          { class: '解約', score: 0.12 },
        ],
        modelId: 'm1',
        trainedAt: '2026-11-01T00:00:00+00:00',
        text: 'customer' as const,
        chars: 600,
        characters: 40,
        classifiedAt: '2026-11-28T00:00:00.000Z',
      },
    };
    const html = renderCallPage(doc, { timeZone: 'Asia/Tokyo' });
    expect(html).toContain('reason <b>請求</b>');
    expect(html).toMatch(
      /<div id="reason" data-reason="請求"><span class="chip best" [^>]*>請求 82 %<\/span>/,
    );
    expect(html).toContain('model m1, trained 2026-11-01T00:00:00+00:00');
    expect(renderCallPage(resultFixture(), { timeZone: 'UTC' })).not.toContain('id="reason"');
  });
});

describe('night report', () => {
  it('counts reasons, their share of the classified calls and the unclassified apart', () => {
    const { reasons, unclassified } = nightReasons(rows(['請求', '故障', '請求', null, '請求']));
    expect(unclassified).toBe(1);
    expect(reasons.map((r) => [r.reason, r.calls, r.share])).toEqual([
      ['請求', 3, 0.75],
      ['故障', 1, 0.25],
    ]);
  });

  it('shows the trend against the day before: points of share, or new', () => {
    const html = reasonsSection(rows(['請求', '故障', '請求', '請求']), rows(['請求', '故障']));
    expect(html).toMatch(/data-reason="請求">.*<td class="num trend">\+25\.0 pt<\/td>/);
    expect(html).toMatch(/data-reason="故障">.*<td class="num trend">−25\.0 pt<\/td>/);
    expect(reasonsSection(rows(['解約']), rows(['請求']))).toContain('>new<');
    expect(reasonsSection(rows([null]))).toBe('');
  });
});
