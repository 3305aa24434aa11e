/**
 * The one writer of the CSV callpipe gives people (`callpipe query --csv`, the batch's and the rescore's
 * report.csv): csv-stringify (csv-parse's sibling) quotes and escapes, and every text cell that a
 * spreadsheet would run as a formula is neutralised here, since manifest columns, agents' names and
 * summaries are users' text.
 *
 * The rule (OWASP's for CSV injection): a text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage
 * return (or their full-width forms, which Japanese spreadsheets accept as the same) gets a leading `'`,
 * which spreadsheets show as text and do not run. Numbers stay numbers: a value that is a number (a
 * numeric column) is written as it is, and so is a text cell that is nothing but a decimal number
 * (`-2`, `+3.5`), which a spreadsheet reads as that number and never as a formula.
 */
import { stringify } from 'csv-stringify/sync';

const FORMULA_START = /^[=+\-@\t\r＝＋－＠]/;
const PLAIN_NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** A text cell as a spreadsheet may show it but never run it. */
export function neutraliseFormula(text: string): string {
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
}

export interface CsvOptions {
  /** How a number is written (e.g. rounded); the default is JavaScript's shortest form. */
  number?: (value: number) => string;
}

/** Text of a cell before neutralising: lists joined, objects as JSON, absent values empty. */
function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map(textOf).join(', ');
  if (typeof value === 'object' && !(value instanceof Date)) return JSON.stringify(value);
  return value instanceof Date ? value.toISOString() : String(value);
}

/** A header row and one row per record (the columns' values in order), with a final newline. */
export function toCsv(
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  options: CsvOptions = {},
): string {
  const number = options.number ?? String;
  const cells = rows.map((row) =>
    row.map((value) =>
      typeof value === 'number' || typeof value === 'bigint'
        ? number(Number(value))
        : neutraliseFormula(textOf(value)),
    ),
  );
  return stringify([columns.map((c) => neutraliseFormula(c)), ...cells], { record_delimiter: '\n' });
}
