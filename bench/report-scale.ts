/**
 * The night report of a large batch (activities/pages/night-report.ts) in a real browser: the size of
 * report.html for a generated batch (test/helpers/large-report.ts), the time to render it, and in headless
 * Chromium (test/helpers/browser.ts) the time until the page shows its totals and the first page of calls,
 * and the time to page to the last call.
 *
 *   npm run bench:report                      # 100,000 calls
 *   npm run bench:report -- --calls 20000     # a smaller batch
 *   npm run bench:report -- --all-rows        # also the whole table in the HTML (the shape before paging)
 *
 * With --all-rows the same report is rendered a second time with every call's row in the HTML (as the
 * page was before its table was paged) and the figures of both are printed with their ratio. A load that
 * does not finish within --timeout seconds is printed as such.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { renderNightReport } from '../activities/pages/night-report.ts';
import { launchBrowser } from '../test/helpers/browser.ts';
import { largeCallId, largeReport } from '../test/helpers/large-report.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '100000' },
    timeout: { type: 'string', default: '300' },
    'all-rows': { type: 'boolean', default: false },
  },
});
const n = Number(values.calls);
const timeoutMs = Number(values.timeout) * 1000;

interface Figures {
  bytes: number;
  renderMs: number;
  loadMs: number | null;
  lastPageMs: number | null;
}

const { report, calls } = largeReport(n);
const dir = mkdtempSync(join(tmpdir(), 'callpipe-report-scale-'));
const browser = await launchBrowser();

async function measure(label: string, htmlRows: number | undefined): Promise<Figures> {
  const t0 = performance.now();
  const html = renderNightReport(report, calls, {
    timeZone: 'Asia/Tokyo',
    pageHref: (id) => `../../${id}/call.html`,
    ...(htmlRows !== undefined ? { htmlRows } : {}),
  });
  const renderMs = performance.now() - t0;
  const file = join(dir, `${label}.html`);
  writeFileSync(file, html);
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  let loadMs: number | null = null;
  let lastPageMs: number | null = null;
  try {
    const t1 = performance.now();
    await page.goto(pathToFileURL(file).href, { timeout: timeoutMs, waitUntil: 'load' });
    // Loaded: the totals are there and the script has shown the first page (`#shown` is its count).
    await page.waitForFunction(
      () => !!document.querySelector('#fact-calls b') && !!document.getElementById('shown')?.textContent,
      undefined,
      { timeout: timeoutMs },
    );
    loadMs = performance.now() - t1;
    const t2 = performance.now();
    await page.click('#page-last', { timeout: timeoutMs });
    await page.waitForSelector(`#calls tbody tr td[data-v="${largeCallId(n - 1)}"]`, { timeout: timeoutMs });
    lastPageMs = performance.now() - t2;
  } catch (err) {
    console.log(`  ${label}: ${(err as Error).message.split('\n')[0]}`);
  } finally {
    await page.close();
  }
  return { bytes: Buffer.byteLength(html), renderMs, loadMs, lastPageMs };
}

const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;
const s = (ms: number | null) =>
  ms === null ? `> ${values.timeout} s (not loaded)` : `${(ms / 1000).toFixed(2)} s`;
function print(label: string, f: Figures) {
  console.log(
    `${label.padEnd(28)} report.html ${mb(f.bytes).padStart(9)} · render ${s(f.renderMs)} · ` +
      `load to totals and first page ${s(f.loadMs)} · to the last page ${s(f.lastPageMs)}`,
  );
}

try {
  console.log(
    `night report of ${n.toLocaleString('en-US')} calls (${calls.size.toLocaleString('en-US')} rows in calls)`,
  );
  const paged = await measure('paged', undefined);
  print('paged (one page in HTML)', paged);
  if (values['all-rows']) {
    const all = await measure('all-rows', n);
    print('every row in the HTML', all);
    console.log(
      `ratio: size ${(all.bytes / paged.bytes).toFixed(1)}× smaller` +
        (all.loadMs !== null && paged.loadMs !== null
          ? `, load ${(all.loadMs / paged.loadMs).toFixed(1)}× faster`
          : ''),
    );
  }
} finally {
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
}
