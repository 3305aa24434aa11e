/**
 * A text classifier's training file (spec 03, Training file and Limits): CSV of `class,text` records, a
 * text with commas, quotes or line breaks quoted with inner quotes doubled; at most 10 MB and 10,000
 * lines, a class name of at most 128 characters, a text of at most 3,000, at least 2 classes and at
 * least 6 items of each. One reader for the service's emulator and for `callpipe reasons train`, which
 * refuses a file before sending it with the line at fault named.
 */
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { TRAINING_LIMITS } from './classifier-limits.ts';

export interface TrainingRow {
  /** The line of the file where the record begins, from 1. */
  line: number;
  class: string;
  text: string;
}

export interface DatasetProblem {
  /** The line at fault, when one is. */
  line?: number;
  /** Spec 03's parameter-text form (`class : must be less than 128 character`), as the service answers. */
  message: string;
}

const chars = (s: string) => [...s].length;

/** A record's problem against the per-line limits, or none. */
function rowProblem(row: TrainingRow, fields: number): DatasetProblem | undefined {
  const { line } = row;
  if (fields !== 2)
    return { line, message: `dataset : invalid format (${fields} fields, expected class,text)` };
  if (row.class.trim() === '') return { line, message: 'class : must not be blank' };
  if (chars(row.class) > TRAINING_LIMITS.classChars)
    return { line, message: `class : must be less than ${TRAINING_LIMITS.classChars} character` };
  if (row.text.trim() === '') return { line, message: 'text : must not be blank' };
  if (chars(row.text) > TRAINING_LIMITS.textChars)
    return { line, message: `text : must be less than ${TRAINING_LIMITS.textChars} character` };
  return undefined;
}

/** Problems of the whole file: its number of classes and of items per class (the class's first line named). */
function classProblems(rows: readonly TrainingRow[]): DatasetProblem[] {
  const byClass = new Map<string, TrainingRow[]>();
  for (const row of rows) byClass.set(row.class, [...(byClass.get(row.class) ?? []), row]);
  const problems: DatasetProblem[] = [];
  if (byClass.size < TRAINING_LIMITS.minClasses)
    problems.push({
      message: `class : size must be between ${TRAINING_LIMITS.minClasses} and ${TRAINING_LIMITS.lines}`,
    });
  for (const [name, items] of byClass) {
    if (items.length < TRAINING_LIMITS.minPerClass) {
      problems.push({
        line: items[0]!.line,
        message: `class : ${name} must be greater than or equal to ${TRAINING_LIMITS.minPerClass} items (has ${items.length})`,
      });
    }
  }
  return problems;
}

/** A CSV record and the line of the file where it begins (a quoted text may span lines). */
export interface CsvRecord {
  line: number;
  fields: string[];
}

/** The records of a CSV file of at most 10 MB, or the problem that stops reading it. */
export function readCsvRecords(
  data: Buffer | string,
): { records: CsvRecord[] } | { problem: DatasetProblem } {
  const bytes = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
  if (bytes > TRAINING_LIMITS.bytes)
    return { problem: { message: `dataset : size must be between 1 and ${TRAINING_LIMITS.bytes}` } };
  let parsed: { record: string[]; info: { lines: number } }[];
  try {
    parsed = parse(data, {
      bom: true,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
    }) as unknown as typeof parsed;
  } catch (err) {
    const line = (err as { lines?: number }).lines;
    return {
      problem: { ...(line ? { line } : {}), message: `dataset : invalid format (${(err as Error).message})` },
    };
  }
  if (parsed.length === 0) return { problem: { message: 'dataset : must not be empty' } };
  // csv-parse counts the line a record ends on; a quoted text with line breaks began earlier.
  const records = parsed.map(({ record, info }) => ({
    line: info.lines - record.reduce((n, f) => n + (f.match(/\n/g)?.length ?? 0), 0),
    fields: record,
  }));
  return { records };
}

/** Every problem of training rows against spec 03's limits, in file order; none: the file may be sent. */
export function trainingRowsProblems(rows: readonly (TrainingRow & { fields?: number })[]): DatasetProblem[] {
  const problems: DatasetProblem[] = [];
  if (rows.length > TRAINING_LIMITS.lines) {
    problems.push({
      line: rows[TRAINING_LIMITS.lines]!.line,
      message: `dataset : size must be between 1 and ${TRAINING_LIMITS.lines} lines`,
    });
  }
  for (const row of rows) {
    const problem = rowProblem(row, row.fields ?? 2);
    if (problem) problems.push(problem);
  }
  if (problems.length === 0) problems.push(...classProblems(rows));
  return problems;
}

/**
 * The records of a training file and every problem found, in file order (the size first). A file with
 * problems must not be sent; the service refuses it with the first.
 */
export function readTrainingCsv(data: Buffer | string): { rows: TrainingRow[]; problems: DatasetProblem[] } {
  const read = readCsvRecords(data);
  if ('problem' in read) return { rows: [], problems: [read.problem] };
  return classTextRows(read.records);
}

/** `class,text` records as training rows, with every problem of them. */
export function classTextRows(records: readonly CsvRecord[]): {
  rows: TrainingRow[];
  problems: DatasetProblem[];
} {
  const rows = records.map(({ line, fields }) => ({
    line,
    class: fields[0] ?? '',
    text: fields[1] ?? '',
    fields: fields.length,
  }));
  return {
    rows: rows.map(({ line, class: c, text }) => ({ line, class: c, text })),
    problems: trainingRowsProblems(rows),
  };
}

/** A training file of `rows`, quoted as spec 03 says where a text needs it. */
export function trainingCsv(rows: readonly { class: string; text: string }[]): string {
  return stringify(rows.map((r) => [r.class, r.text]));
}
