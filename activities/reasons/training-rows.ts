/**
 * The lines of a reasons training file, in either form `callpipe reasons train` takes:
 * - `class,text` lines, sent as they are;
 * - `callId,class` lines under a `callId,class` header: each example is built from the call's stored,
 *   redacted result.json (reason-text.ts: the customer's words or the summary).
 * Every problem names its line; the rows are checked against spec 03's limits
 * (schemas/classifier-dataset.ts) before anything is sent.
 */
import { callOutputKeys, KeyError, type OutputLocation } from '../../schemas/call-keys.ts';
import {
  classTextRows,
  readCsvRecords,
  trainingRowsProblems,
  type DatasetProblem,
  type TrainingRow,
} from '../../schemas/classifier-dataset.ts';
import type { ReasonTextChoice } from '../../schemas/reasons.ts';
import { resultDocumentSchema } from '../../schemas/result.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { reasonText } from './reason-text.ts';

export interface TrainingSet {
  rows: TrainingRow[];
  problems: DatasetProblem[];
  /** `callId,class` lines: what their texts were built from; null for `class,text` lines. */
  text: ReasonTextChoice | null;
}

/** Where the stored results of `callId,class` lines are, and what of them to take. */
export interface ResultsSource {
  /** The output bucket's store. */
  results: ObjectStore;
  output: OutputLocation;
  text: ReasonTextChoice;
}

const isCallIdHeader = (fields: readonly string[]) =>
  fields.length === 2 &&
  fields[0]!.trim().toLowerCase() === 'callid' &&
  fields[1]!.trim().toLowerCase() === 'class';

/** One `callId,class` line's example: the text of its stored result, or the line's problem. */
async function exampleOf(
  source: ResultsSource,
  line: number,
  callId: string,
  cls: string,
): Promise<TrainingRow | DatasetProblem> {
  let key: string;
  try {
    key = callOutputKeys(source.output, callId).result;
  } catch (err) {
    if (err instanceof KeyError) return { line, message: `callId : ${err.message}` };
    throw err;
  }
  const stored = await source.results.read(key);
  if (!stored) return { line, message: `callId : no result.json for this call under the output prefix` };
  const parsed = resultDocumentSchema.safeParse(JSON.parse(stored.body.toString('utf8')));
  if (!parsed.success) return { line, message: 'callId : its result.json does not match its schema' };
  const text = reasonText(parsed.data, source.text);
  if (text === '')
    return {
      line,
      message: `callId : the call has no ${source.text.text === 'summary' ? 'summary' : 'words'} to learn from`,
    };
  return { line, class: cls, text };
}

/** The training rows of a file's bytes, with every problem found. */
export async function trainingSet(data: Buffer | string, source: () => ResultsSource): Promise<TrainingSet> {
  const read = readCsvRecords(data);
  if ('problem' in read) return { rows: [], problems: [read.problem], text: null };
  const [first, ...rest] = read.records;
  if (!isCallIdHeader(first!.fields)) {
    return { ...classTextRows(read.records), text: null };
  }
  const results = source();
  const problems: DatasetProblem[] = [];
  const rows: TrainingRow[] = [];
  for (const { line, fields } of rest) {
    if (fields.length !== 2) {
      problems.push({
        line,
        message: `dataset : invalid format (${fields.length} fields, expected callId,class)`,
      });
      continue;
    }
    const built = await exampleOf(results, line, fields[0]!.trim(), fields[1]!);
    if ('message' in built) problems.push(built);
    else rows.push(built);
  }
  if (problems.length === 0) problems.push(...trainingRowsProblems(rows));
  return { rows, problems, text: results.text };
}
