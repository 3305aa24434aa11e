/**
 * What callpipe writes for people, under hostile or large input, in a real browser and against the real
 * S3 server of the test stack:
 * - the night report of 100,000 calls (generated, test/helpers/large-report.ts) opens in headless
 *   Chromium with its totals and first page of calls, pages to the last call, filters and sorts;
 * - a key holding a right-to-left override shows as stored on the call page, not reversed;
 * - a worker whose clock is a day off S3's (this process's `Date.now` shifted, which the AWS SDK signs
 *   with and the classifier reads: the machine's clock is not touched) gets the reason to fix the host's
 *   time, and the next attempt passes.
 * Size and load time of the large report are measured in bench/report-scale.ts, not asserted here.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { launchBrowser } from '../helpers/browser.ts';
import { stackConfig } from '../helpers/stack.ts';
import { largeCallId, largeReport } from '../helpers/large-report.ts';
import { resultFixture } from '../helpers/result-fixture.ts';
import { renderNightReport, CALLS_PAGE_SIZE } from '../../activities/pages/night-report.ts';
import { renderCallPage } from '../../activities/pages/call-page.ts';
import { createS3Client } from '../../activities/storage/object-store.ts';
import { toActivityFailure } from '../../activities/failure-boundary.ts';

/** Pages draw after their scripts run; a loaded machine takes well over vitest's 1-s default poll. */
const POLL = { timeout: 60_000 };
const CALLS = 100_000;
const DAY = 24 * 3600_000;

/** One second of 8-kHz 16-bit silence: a recording the call page's player can load. */
function silentWav(): Buffer {
  const data = Buffer.alloc(16_000);
  const head = Buffer.alloc(44);
  head.write('RIFF', 0);
  head.writeUInt32LE(36 + data.length, 4);
  head.write('WAVEfmt ', 8);
  head.writeUInt32LE(16, 16);
  head.writeUInt16LE(1, 20);
  head.writeUInt16LE(1, 22);
  head.writeUInt32LE(8000, 24);
  head.writeUInt32LE(16_000, 28);
  head.writeUInt16LE(2, 32);
  head.writeUInt16LE(16, 34);
  head.write('data', 36);
  head.writeUInt32LE(data.length, 40);
  return Buffer.concat([head, data]);
}

let browser: Browser;
let dir: string;

beforeAll(async () => {
  browser = await launchBrowser();
  dir = mkdtempSync(join(tmpdir(), 'callpipe-hostile-outputs-'));
});
afterAll(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function open(file: string, html: string): Promise<{ page: Page; errors: string[] }> {
  writeFileSync(join(dir, file), html);
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.route(/^(?!file:)/, (route) => {
    errors.push(`network request: ${route.request().url()}`);
    return route.abort();
  });
  // A page of 100,000 calls holds ~10 MB of data: loading it is not a speed test.
  await page.goto(pathToFileURL(join(dir, file)).href, { timeout: 600_000 });
  return { page, errors };
}

const firstCells = (page: Page, col: number) =>
  page.$$eval(`#calls tbody tr td:nth-child(${col})`, (tds) => tds.map((td) => td.getAttribute('data-v')));

describe('outputs for people under hostile and large input: the night report and the call page', () => {
  it('the night report of 100,000 calls opens with its totals and first page, and pages to the last call', async () => {
    const { report, calls } = largeReport(CALLS);
    const html = renderNightReport(report, calls, {
      timeZone: 'Asia/Tokyo',
      pageHref: (id) => `../../${id}/call.html`,
    });
    const { page, errors } = await open('report.html', html);

    expect((await page.locator('#fact-calls b').textContent())?.trim()).toBe(String(CALLS));
    const failed = report.rows.filter((r) => r.status === 'failed').length;
    expect((await page.locator('#fact-failed b').textContent())?.trim()).toBe(String(failed));
    await expect.poll(() => page.locator('#shown').textContent(), POLL).toBe(`${CALLS} of ${CALLS} calls`);
    expect(await page.locator('#calls tbody tr').count()).toBe(CALLS_PAGE_SIZE);
    expect(await firstCells(page, 1)).toEqual(report.rows.slice(0, CALLS_PAGE_SIZE).map((r) => r.callId));
    const pages = Math.ceil(CALLS / CALLS_PAGE_SIZE);
    expect(await page.locator('#page-at').textContent()).toBe(`page 1 of ${pages}`);

    // The last page holds the last call, linked to its page.
    await page.click('#page-last');
    await expect.poll(() => page.locator('#page-at').textContent(), POLL).toBe(`page ${pages} of ${pages}`);
    const last = await firstCells(page, 1);
    expect(last.at(-1)).toBe(largeCallId(CALLS - 1));
    expect(await page.locator(`#calls a`, { hasText: largeCallId(CALLS - 1) }).getAttribute('href')).toBe(
      `../../${largeCallId(CALLS - 1)}/call.html`,
    );
    await page.click('#page-prev');
    await expect
      .poll(() => page.locator('#page-at').textContent(), POLL)
      .toBe(`page ${pages - 1} of ${pages}`);

    // Filters and sorting work over every call, not the page shown.
    await page.selectOption('#filter-status', 'failed');
    await expect.poll(() => page.locator('#shown').textContent(), POLL).toBe(`${failed} of ${CALLS} calls`);
    expect(new Set(await firstCells(page, 2))).toEqual(new Set(['failed']));
    await page.selectOption('#filter-status', '');
    await page.fill('#filter-text', largeCallId(54_321));
    await expect.poll(() => page.locator('#shown').textContent(), POLL).toBe(`1 of ${CALLS} calls`);
    await page.fill('#filter-text', '');
    await page.locator('#calls th', { hasText: 'duration' }).click();
    const durations = (await firstCells(page, 4)).map(Number);
    const all = report.rows.flatMap((r) => (r.durationSeconds !== undefined ? [r.durationSeconds] : []));
    expect(durations).toEqual(all.sort((a, b) => a - b).slice(0, CALLS_PAGE_SIZE));
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a key holding a right-to-left override shows as stored on the call page', async () => {
    const result = resultFixture({ metadata: { agent: 'agent\u202E1' } });
    const key = 'recordings/invoice\u202Evaw.exe';
    result.source = { ...result.source, key, uri: `s3://${result.source.bucket}/${key}` };
    writeFileSync(join(dir, 'call.wav'), silentWav());
    const { page, errors } = await open(
      'call.html',
      renderCallPage(result, { timeZone: 'UTC', audioHref: 'call.wav' }),
    );
    // innerText is what a person reads: in stored order, the override shown as a visible mark.
    expect(await page.locator('#audio-note').innerText()).toBe(
      `Recording: s3://${result.source.bucket}/recordings/invoice<U+202E>vaw.exe`,
    );
    expect(await page.locator('header.top').innerText()).toContain('agent agent<U+202E>1');
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('outputs for people under hostile and large input', () => {
  describe("a worker's clock a day off S3's", () => {
    let client: S3Client;
    const config = () => stackConfig();
    const key = `hostile-outputs/${randomUUID()}.json`;
    afterAll(() => client?.destroy());
    afterEach(() => vi.restoreAllMocks());
    /** This process's clock `offset` off the machine's, as on a host whose clock is wrong. */
    const shiftClock = (offset: number) => {
      const now = Date.now.bind(Date);
      vi.spyOn(Date, 'now').mockImplementation(() => now() + offset);
    };

    for (const offset of [DAY, -DAY]) {
      it(`${offset > 0 ? 'ahead' : 'behind'}: S3 refuses it, the reason says to fix the host's time, the next attempt passes`, async () => {
        shiftClock(offset);
        client = createS3Client(config().s3, { maxAttempts: 1 });
        const put = new PutObjectCommand({ Bucket: config().s3.bucket, Key: key, Body: '{}' });
        const refused = await client.send(put).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(refused, 'S3 accepted a request signed a day off').toBeDefined();
        const failure = toActivityFailure(refused) as Error & { nonRetryable: boolean };
        expect(failure.message).toMatch(
          new RegExp(
            `^S3 refused the request's time: this host's clock is (23 h 5\\d min|1 d 00 h) ${offset > 0 ? 'ahead of' : 'behind'} S3's`,
          ),
        );
        expect(failure.message).toContain("fix the host's time");
        expect(failure.nonRetryable).toBe(false);
        // Another attempt is signed on S3's clock, which the SDK took from the refusal.
        await client.send(put);
        expect(
          (await client.send(new HeadObjectCommand({ Bucket: config().s3.bucket, Key: key }))).ContentLength,
        ).toBe(2);
        client.destroy();
      });
    }

    it("a HEAD refused for the time (no body: the SDK's `UnknownError`) gets the same reason", async () => {
      shiftClock(DAY);
      client = createS3Client(config().s3, { maxAttempts: 1 });
      const err = await client.send(new HeadObjectCommand({ Bucket: config().s3.bucket, Key: key })).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).toBe('UnknownError');
      expect((toActivityFailure(err) as Error).message).toMatch(
        /^S3 refused the request's time: this host's clock is/,
      );
    });
  });
});
