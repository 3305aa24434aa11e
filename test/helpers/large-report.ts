/**
 * A night report of a large batch, generated (no stack): report rows of every outcome and the `calls`
 * rows of the processed ones (agent, sentiment, categories, score, a summary of ordinary length), as
 * activities/pages/page-activities.ts hands them to the renderer. Shared by the browser test of the paged
 * report and bench/report-scale.ts.
 */
import type { BatchReport } from '../../activities/backfill/report.ts';
import type { ReportRow } from '../../schemas/backfill.ts';
import type { TableRow } from '../../schemas/tables.ts';

const SENTIMENTS = ['Positive', 'Neutral', 'Negative'];
const CATEGORIES = ['解約', '請求', '苦情', '住所変更', 'プラン変更'];

/** The id of the i-th call (sorted as the report sorts its rows: by source). */
export const largeCallId = (i: number) => `call-${String(i).padStart(6, '0')}`;

export function largeReport(n: number): { report: BatchReport; calls: Map<string, TableRow> } {
  const rows: ReportRow[] = [];
  const calls = new Map<string, TableRow>();
  const start = Date.parse('2026-03-01T00:00:00Z');
  for (let i = 0; i < n; i++) {
    const callId = largeCallId(i);
    const status = i % 50 === 7 ? 'failed' : i % 50 === 8 ? 'partial' : i % 50 === 9 ? 'skipped' : 'done';
    const durationSeconds = 30 + ((i * 37) % 1800);
    rows.push({
      callId,
      source: `s3://recordings/2026/03/01/${callId}.wav`,
      status,
      ...(status === 'failed'
        ? { stage: 'probe', reason: 'the file is not audio callpipe can read (no audio stream)' }
        : { durationSeconds, sessions: 1 + (i % 3), wallSeconds: 20 + (i % 90), requests: 40 + (i % 60) }),
    });
    if (status === 'done' || status === 'partial') {
      calls.set(callId, {
        call_id: callId,
        call_started_at: new Date(start + i * 7000),
        agent: `agent-${i % 40}`,
        sentiment_label: SENTIMENTS[i % 3]!,
        customer_sentiment_label: SENTIMENTS[(i >> 1) % 3]!,
        customer_sentiment_mean: ((i % 21) - 10) / 10,
        categories: [CATEGORIES[i % 5]!, ...(i % 4 === 0 ? [CATEGORIES[(i + 2) % 5]!] : [])],
        score: i % 6,
        score_max: 5,
        score_normalized: (i % 6) / 5,
        summary: `お客様から${CATEGORIES[i % 5]}についてのお問い合わせ。担当者が手続きを案内し、${i % 2 ? '解決した' : '折り返しを約束した'}。`,
        roles_decision: i % 10 === 0 ? 'swapped' : 'channel-map',
        speakers_inferred: false,
        processed_at: new Date(start + n * 7000),
      });
    }
  }
  const report: BatchReport = {
    batchId: `large-${n}`,
    source: 's3://recordings/2026/03/01/',
    output: 's3://results/',
    startedAt: '2026-03-01T00:00:00Z',
    finishedAt: '2026-03-01T06:00:00Z',
    status: 'done',
    runs: 1,
    counters: {} as BatchReport['counters'],
    audioHours: 0,
    rows,
  };
  return { report, calls };
}
