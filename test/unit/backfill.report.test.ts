import { describe, expect, it } from 'vitest';
import { countRows, mergeRows, reportCsv } from '../../activities/backfill/report.ts';
import { batchReportPrefix } from '../../schemas/call-keys.ts';
import type { ReportRow } from '../../schemas/backfill.ts';

describe('batch report', () => {
  const done: ReportRow = {
    callId: 'b-1',
    source: 's3://x/b.wav',
    status: 'done',
    durationSeconds: 12.34567,
    sessions: 2,
    wallSeconds: 3.5,
    requests: 40,
  };
  const failed: ReportRow = {
    callId: 'a-1',
    source: 's3://x/a.wav',
    status: 'failed',
    reason: 'probe: bad "header", sorry',
  };

  it('merges parts in source order, the last row of a call winning', () => {
    const rows = mergeRows([[done, { ...failed, status: 'cancelled' }], [failed]]);
    expect(rows.map((r) => [r.callId, r.status])).toEqual([
      ['a-1', 'failed'],
      ['b-1', 'done'],
    ]);
    expect(countRows(rows)).toEqual({ failed: 1, done: 1 });
  });

  it('writes CSV with a header, quoting and rounded numbers', () => {
    const csv = reportCsv([failed, done]);
    const lines = csv.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'callId,source,status,reason,stage,durationSeconds,sessions,wallSeconds,requests,workflowId,resultKey',
    );
    expect(lines[1]).toBe('a-1,s3://x/a.wav,failed,"probe: bad ""header"", sorry",,,,,,,');
    expect(lines[2]).toBe('b-1,s3://x/b.wav,done,,,12.346,2,3.5,40,,');
  });

  it('keeps batch folders apart from call folders', () => {
    expect(batchReportPrefix({ bucket: 'b', prefix: 'results' }, 'prefix-x:1')).toBe(
      'results/batches/prefix-x_1/',
    );
  });
});
