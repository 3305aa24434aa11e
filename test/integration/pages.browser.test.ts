/**
 * The call viewer and the night report in a real browser (issue 17): a small manifest backfill on the
 * shared test stack (two calls and one file that is not audio), then `callpipe open` copies each page
 * from S3 and headless Chromium (Debian's, driven by playwright-core, offline) checks that what they
 * show equals the documents they came from: utterances, speakers, summary, redaction markers, a chart
 * drawn, the player following the transcript; the report's rows, failure, filters and links.
 * Screenshots are kept in .test-artifacts/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { startBackfill } from '../../cli/commands/backfill.ts';
import { callSpec } from '../../cli/submit.ts';
import { callpipe as run } from '../helpers/cli.ts';
import { makeCall } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { callIdOf } from '../../activities/storage/call-id.ts';
import type { ResultDocument } from '../../schemas/result.ts';
import type { BackfillResult } from '../../workflows/backfill.ts';
import type { ReportRow } from '../../schemas/backfill.ts';
import { runId } from '../helpers/run-id.ts';

const ARTIFACTS = fileURLToPath(new URL('../../.test-artifacts/', import.meta.url));
/** The page draws after its scripts run; under load that takes well over vitest's 1-s default poll. */
const POLL = { timeout: 20_000 };

let dir: string;
let pc: PipelineClient;
let browser: Browser;
let result: BackfillResult;
const id = runId();
const output = { bucket: 'callpipe', prefix: `pages-${id}/` };
const out = `s3://${output.bucket}/${output.prefix}`;
const callIds: string[] = [];
const env = () => ({ ...inject('stackEnv'), CALLPIPE_TIME_ZONE: 'Asia/Tokyo' });

beforeAll(async () => {
  browser = await launchBrowser();
  dir = mkdtempSync(join(tmpdir(), 'callpipe-pages-'));
  pc = await connectPipeline(stackConfig());
  const keys: string[] = [];
  for (let i = 0; i < 2; i++) {
    // The first call opens with a customer giving personal data: its page shows real redactions.
    const call = await makeCall(dir, `page-${i}.wav`, {
      durationSeconds: i === 0 ? 150 : 30,
      stereo: true,
      seed: 900 + i,
      sampleRate: 8000,
      personalData: i === 0,
    });
    const key = `recordings/pages-${id}/call-${i}.wav`;
    await pc.store.putFile(key, call.path);
    keys.push(key);
    callIds.push(callIdOf({ bucket: pc.store.bucket, key }));
  }
  const broken = `recordings/pages-${id}/broken.wav`;
  await pc.store.put(broken, Buffer.from('RIFF not really a recording '.repeat(40)));
  keys.push(broken);
  const manifestKey = `manifests/pages-${id}.csv`;
  await pc.store.put(
    manifestKey,
    'key,agent,started_at,queue\n' +
      keys.map((k, i) => `${k},agent-${i},2026-03-0${i + 1}T10:00:00+09:00,billing`).join('\n') +
      '\n',
  );
  const started = await startBackfill(pc, {
    batchId: `test-pages-${id}`,
    source: { kind: 'manifest', bucket: pc.store.bucket, key: manifestKey },
    output,
    spec: {
      ...callSpec(pc.config, output),
      tables: { bucket: output.bucket, prefix: `tables-pages-${id}/`, timeZone: 'Asia/Tokyo' },
    },
  });
  result = await started.handle.result();
});

afterAll(async () => {
  await browser?.close();
  await pc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function openPage(target: string): Promise<{ page: Page; url: string; errors: string[] }> {
  const opened = await run(['open', target, '--out', out, '--no-browser'], env());
  expect(opened.code, opened.stderr).toBe(0);
  const url = opened.stdout.trim();
  expect(url).toMatch(/^file:\/\//);
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // Offline: any request that is not a local file would be the page reaching out.
  await page.route(/^(?!file:)/, (route) => {
    errors.push(`network request: ${route.request().url()}`);
    return route.abort();
  });
  await page.goto(url);
  return { page, url, errors };
}

/** Pixels drawn (not transparent) on the chart's canvas. */
function drawnPixels(page: Page, selector: string): Promise<number> {
  return page.$eval(selector, (el) => {
    const canvas = el.querySelector('canvas');
    if (!canvas) return 0;
    const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    let n = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
    return n;
  });
}

async function resultOf(callId: string): Promise<ResultDocument> {
  return JSON.parse(await pc.store.getText(`${output.prefix}${callId}/result.json`)) as ResultDocument;
}

describe('call page and night report in a browser: the call page', () => {
  it('the call page shows what result.json holds, draws its chart, and its player follows the transcript', async () => {
    expect(result).toMatchObject({ status: 'done', done: 2, failed: 1 });
    const doc = await resultOf(callIds[0]!);
    expect(doc.utterances.length).toBeGreaterThan(3);
    const { page, url, errors } = await openPage(callIds[0]!);

    expect(await page.title()).toBe(`${doc.callId} · callpipe call`);
    expect(await page.locator('#transcript tr.utt').count()).toBe(doc.utterances.length);
    expect(await page.locator('#transcript td.text').allTextContents()).toEqual(
      doc.utterances.map((u) => u.text),
    );
    expect(await page.locator('#speakers tbody td:first-child').allTextContents()).toEqual(doc.speakers);
    expect((await page.locator('#summary-text').textContent())?.trim()).toBe(doc.summary!.text);
    expect(await page.locator('#keywords .chip').allTextContents()).toEqual(
      (doc.keywords ?? []).map((k) => k.text),
    );
    const redactions = doc.utterances.reduce((n, u) => n + (u.redactions?.length ?? 0), 0);
    expect(redactions).toBeGreaterThan(3);
    expect(await page.locator('mark.redacted').count()).toBe(redactions);
    expect(await page.locator('#categories tr.matched').count()).toBe(
      doc.categories?.filter((c) => c.matched).length ?? 0,
    );
    await expect.poll(() => drawnPixels(page, '#sentiment-chart'), POLL).toBeGreaterThan(1000);

    // The recording was copied beside the page: the player loads it and follows the transcript.
    expect(url).toContain('?audio=');
    await expect
      .poll(() => page.$eval('#player', (a) => (a as HTMLAudioElement).duration), { timeout: 20_000 })
      .toBeCloseTo(doc.audio.durationSeconds, 0);
    const target = doc.utterances.length - 1;
    await page.locator(`#u${target} a.seek`).click();
    await expect
      .poll(() => page.$eval(`#u${target}`, (r) => r.classList.contains('current')), { timeout: 20_000 })
      .toBe(true);
    expect(await page.$eval('#player', (a) => (a as HTMLAudioElement).currentTime)).toBeGreaterThanOrEqual(
      doc.utterances[target]!.start - 0.01,
    );
    await page.$eval('#player', (a) => (a as HTMLAudioElement).pause());
    expect(errors).toEqual([]);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.evaluate(() => window.scrollTo(0, 0));
    const shot = join(ARTIFACTS, 'call-page.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(20_000);
    const bytes = statSync(fileURLToPath(url.split('?')[0]!)).size;
    console.error(
      `call page: ${bytes} bytes for ${doc.utterances.length} utterances, ${doc.audio.durationSeconds} s`,
    );
    await page.close();
  });

  it('marks each redaction of result.json visibly in the transcript, where result.json puts it', async () => {
    const doc = await resultOf(callIds[0]!);
    const redacted = doc.utterances.flatMap((u, i) => (u.redactions?.length ? [{ u, i }] : []));
    expect(redacted.length).toBeGreaterThan(0);
    const { page, errors } = await openPage(callIds[0]!);
    for (const { u, i } of redacted) {
      const marks = page.locator(`#u${i} mark.redacted`);
      const sorted = [...u.redactions!].sort((a, b) => a.begin - b.begin);
      expect(await marks.evaluateAll((ms) => ms.map((m) => m.getAttribute('data-kind')))).toEqual(
        sorted.map((r) => r.kind),
      );
      expect(await marks.allTextContents()).toEqual(sorted.map((r) => u.text.slice(r.begin, r.end)));
      // The row's text is still the stored text, marks and all.
      expect(await page.locator(`#u${i} td.text`).textContent()).toBe(u.text);
    }
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('call page and night report in a browser: the night report', () => {
  it('the night report lists every call of report.json, its failure with the reason, filters, charts and links', async () => {
    const report = JSON.parse(await pc.store.getText(result.reportJsonKey)) as { rows: ReportRow[] };
    expect(result.reportHtmlKey).toBe(result.reportJsonKey.replace(/report\.json$/, 'report.html'));
    const { page, errors } = await openPage(`test-pages-${id}`);

    expect(await page.title()).toBe(`test-pages-${id} · callpipe night report`);
    expect(await page.locator('#calls tbody tr').count()).toBe(report.rows.length);
    expect((await page.locator('#fact-calls b').textContent())?.trim()).toBe(String(report.rows.length));
    expect((await page.locator('#fact-failed b').textContent())?.trim()).toBe('1');
    const failed = report.rows.find((r) => r.status === 'failed')!;
    expect(await page.locator('#failures tbody tr').count()).toBe(1);
    expect(await page.locator('#failures tbody tr td').nth(3).textContent()).toBe(failed.reason);
    await expect.poll(() => drawnPixels(page, '#durations-chart'), POLL).toBeGreaterThan(500);
    await expect.poll(() => drawnPixels(page, '#sentiment-chart'), POLL).toBeGreaterThan(500);

    // Filter by outcome, then by text; sort by duration.
    await page.selectOption('#filter-status', 'failed');
    expect(await page.locator('#calls tbody tr:not([hidden])').count()).toBe(1);
    await page.selectOption('#filter-status', 'done');
    expect(await page.locator('#calls tbody tr:not([hidden])').count()).toBe(2);
    await page.selectOption('#filter-status', '');
    await page.fill('#filter-text', callIds[1]!);
    expect(await page.locator('#calls tbody tr:not([hidden])').count()).toBe(1);
    await page.fill('#filter-text', '');
    await page.locator('#calls th', { hasText: 'duration' }).click();
    const durations = await page.$$eval('#calls tbody tr td:nth-child(4)', (tds) =>
      tds.map((td) => td.getAttribute('data-v')),
    );
    const numbers = durations.filter((v) => v !== '').map(Number);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(errors).toEqual([]);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'night-report.png'), fullPage: true });

    // Each done call links to its page, copied beside the report by `callpipe open`.
    await page.locator(`#calls a`, { hasText: callIds[0]! }).click();
    await expect.poll(() => page.title(), POLL).toBe(`${callIds[0]} · callpipe call`);
    await page.close();
  });
});
