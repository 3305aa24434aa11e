/**
 * Formula injection in the CSV callpipe writes for people: manifest columns, agents' names and reasons
 * are users' text, and a spreadsheet runs a cell starting with `=`, `+`, `-` or `@`. Every writer
 * (`callpipe query --csv` on a real DuckDB, the batch's and the rescore's report.csv) neutralises them
 * and keeps numbers numeric; csv-parse reads back what a spreadsheet would hold.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { neutraliseFormula, toCsv } from '../../activities/csv-output.ts';
import { reportCsv } from '../../activities/backfill/report.ts';
import { run as query } from '../../cli/commands/query.ts';
import type { ReportRow } from '../../schemas/backfill.ts';

const HOSTILE = ["=cmd|' /C calc'!A0", '+SUM(1,2)', '@evil', '-2+3', '\t=1+1', '\r=1+1', '＝1+1'];

const read = (csv: string) => parse(csv, { relax_column_count: false }) as string[][];

describe('CSV output neutralises formula cells', () => {
  it('prefixes every cell a spreadsheet would run with a quote, and leaves plain text and numbers', () => {
    for (const cell of HOSTILE) expect(neutraliseFormula(cell)).toBe(`'${cell}`);
    for (const cell of ['agent-1', 'a=b', '-2', '+3.5', '-1e3', '', '田中'])
      expect(neutraliseFormula(cell)).toBe(cell);
    const rows = read(toCsv(['name', 'n'], [...HOSTILE.map((h) => [h, -2.5]), ['x', 3]]));
    expect(rows[0]).toEqual(['name', 'n']);
    expect(rows.slice(1).map((r) => r[0])).toEqual([...HOSTILE.map((h) => `'${h}`), 'x']);
    expect(rows.slice(1).map((r) => r[1])).toEqual([...HOSTILE.map(() => '-2.5'), '3']);
  });

  it("the batch's report.csv", () => {
    const rows: ReportRow[] = HOSTILE.map((h, i) => ({
      callId: `c-${i}`,
      source: `s3://b/${h}.wav`,
      status: 'failed',
      reason: h,
      durationSeconds: -0.5,
    }));
    const parsed = read(reportCsv(rows));
    const reason = parsed[0]!.indexOf('reason');
    const duration = parsed[0]!.indexOf('durationSeconds');
    expect(parsed.slice(1).map((r) => r[reason])).toEqual(HOSTILE.map((h) => `'${h}`));
    expect(parsed.slice(1).map((r) => r[duration])).toEqual(HOSTILE.map(() => '-0.5'));
  });

  describe('callpipe query --csv', () => {
    let dir: string;
    let out: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'callpipe-csv-'));
      vi.stubEnv('CALLPIPE_HOME', dir);
      out = '';
      vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
        out += String(chunk);
        return true;
      });
    });
    afterEach(() => {
      vi.restoreAllMocks();
      vi.unstubAllEnvs();
      rmSync(dir, { recursive: true, force: true });
    });

    it('writes hostile text cells neutralised and numbers as numbers', async () => {
      const values = HOSTILE.map((h) => `('${h.replaceAll("'", "''")}', -2)`).join(', ');
      const sql = `SELECT t.s AS summary, t.n AS n, -1.5 AS d FROM (VALUES ${values}) AS t(s, n)`;
      expect(await query([sql, '--dir', dir, '--csv'])).toBe(0);
      const rows = read(out);
      expect(rows[0]).toEqual(['summary', 'n', 'd']);
      expect(rows.slice(1)).toEqual(HOSTILE.map((h) => [`'${h}`, '-2', '-1.5']));
    });
  });
});
