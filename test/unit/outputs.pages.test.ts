/**
 * What the pages show of users' text and how much of it: a key or name holding bidirectional controls
 * (a right-to-left override) is shown as stored, never reversed, on the call page and the night report;
 * the night report of a large batch holds its summary and one page of calls in HTML, the other calls as
 * compact data, and lists a bounded number of failures. (The browser side: test/integration/hostile.outputs.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { renderCallPage } from '../../activities/pages/call-page.ts';
import {
  CALLS_PAGE_SIZE,
  FAILURES_LISTED,
  renderNightReport,
  type CallCells,
} from '../../activities/pages/night-report.ts';
import { esc } from '../../activities/pages/html.ts';
import { visibleControls } from '../../schemas/display-text.ts';
import { resultFixture } from '../helpers/result-fixture.ts';
import { largeReport } from '../helpers/large-report.ts';

const RLO = '\u202E';
const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/;
const KEY = `recordings/invoice${RLO}vaw.exe`;

describe('bidirectional controls in names and keys', () => {
  it('are shown as visible escapes, the rest of the text unchanged', () => {
    expect(visibleControls(`a${RLO}b\u2066c\u2069\u200Fd`)).toBe('a<U+202E>b<U+2066>c<U+2069><U+200F>d');
    expect(visibleControls('田中 مرحبا')).toBe('田中 مرحبا');
    expect(esc(`<${RLO}>`)).toBe('&lt;&lt;U+202E&gt;&gt;');
  });

  it('the call page shows the key and the agent as stored, each isolated from the text around it', () => {
    const result = resultFixture({ metadata: { agent: `山田${RLO}太郎` } });
    result.source = { ...result.source, key: KEY, uri: `s3://${result.source.bucket}/${KEY}` };
    const html = renderCallPage(result, { timeZone: 'UTC' });
    expect(html).not.toMatch(BIDI);
    expect(html).toContain(`<bdi>s3://${result.source.bucket}/recordings/invoice&lt;U+202E&gt;vaw.exe</bdi>`);
    expect(html).toContain('agent <bdi>山田&lt;U+202E&gt;太郎</bdi>');
  });

  it("the night report's failures, table and data carry no control", () => {
    const { report, calls } = largeReport(60);
    report.rows[7] = { ...report.rows[7]!, source: `s3://b/${KEY}`, reason: `bad ${RLO}reason` };
    calls.get('call-000000')!.agent = `agent${RLO}1`;
    const html = renderNightReport(report, calls, {
      timeZone: 'UTC',
      pageHref: (id) => `../${id}/call.html`,
    });
    expect(html).not.toMatch(BIDI);
    expect(html).toContain('<bdi>s3://b/recordings/invoice&lt;U+202E&gt;vaw.exe</bdi>');
    expect(html).toContain('bad &lt;U+202E&gt;reason');
    expect(html).toContain('data-v="agent&lt;U+202E&gt;1"');
  });
});

describe('the night report of a large batch', () => {
  const { report, calls } = largeReport(5000);
  const html = renderNightReport(report, calls, {
    timeZone: 'Asia/Tokyo',
    pageHref: (id) => `../../${id}/call.html`,
  });
  const data = JSON.parse(
    /<script type="application\/json" id="calls-data">(.*?)<\/script>/s.exec(html)![1]!,
  ) as {
    pageSize: number;
    href: [string, string];
    hrefs: Record<number, string>;
    rows: CallCells[];
  };

  it('holds the totals and one page of calls in HTML, and every call as data', () => {
    const tbody = /<table id="calls">.*?<tbody>(.*?)<\/tbody>/s.exec(html)![1]!;
    expect(tbody.match(/<tr /g)).toHaveLength(CALLS_PAGE_SIZE);
    expect(html).toMatch(/<div class="fact" id="fact-calls"><b>5000<\/b>/);
    expect(html).toMatch(/<div class="fact" id="fact-failed"><b>100<\/b>/);
    expect(data.pageSize).toBe(CALLS_PAGE_SIZE);
    expect(data.rows.map((r) => r[0])).toEqual(report.rows.map((r) => r.callId));
    expect(data.href).toEqual(['../../', '/call.html']);
    expect(data.hrefs).toEqual({});
    // Linked: done, partial and skipped calls (they have a page); failed ones not.
    expect(data.rows.filter((r) => r[2] === 1)).toHaveLength(4900);
  });

  it('lists a bounded number of failures, and says where the others are', () => {
    const { report: many } = largeReport(FAILURES_LISTED + 20);
    const failed = {
      ...many,
      rows: many.rows.map((r) => ({ ...r, status: 'failed' as const, reason: 'not audio' })),
    };
    const page = renderNightReport(failed, new Map(), {
      timeZone: 'UTC',
      pageHref: (id) => `../${id}/call.html`,
    });
    const failures = /<section class="card" id="failures">(.*?)<\/section>/s.exec(page)![1]!;
    expect(failures).toContain(`<h2>Failures (${FAILURES_LISTED + 20})</h2>`);
    expect(failures.match(/<tr>/g)).toHaveLength(FAILURES_LISTED + 1);
    expect(failures).toContain('20 more');
  });
});
