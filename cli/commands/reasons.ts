/**
 * `callpipe reasons train|list|status|delete`: call reasons as a text classification model (spec 03).
 * `train` reads a labelled file (local or s3://), checks every spec limit before sending with the line at
 * fault named, uploads it, follows the model to `completed` or `failed`, prints its accuracy report and
 * stores it beside the results (`reasons/<model id>.json`). Talks to the service and the object store,
 * not to Temporal.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError, parseCommandArgs } from '../command.ts';
import { pipelineConfig } from '../stack-client.ts';
import { outputLocation } from '../submit.ts';
import { textTable } from '../text-table.ts';
import { readUserFile, UserFileError } from '../../activities/user-file.ts';
import { createObjectStore } from '../../activities/storage/object-store.ts';
import { trainingSet, type TrainingSet } from '../../activities/reasons/training-rows.ts';
import { reasonModelKey } from '../../activities/reasons/model-record.ts';
import { parseS3Url } from '../../schemas/call-keys.ts';
import { trainingCsv } from '../../schemas/classifier-dataset.ts';
import { MAX_CLASSIFIER_MODELS, TRAINING_LIMITS } from '../../schemas/classifier-limits.ts';
import type { Config } from '../../schemas/config.ts';
import {
  REASON_TEXTS,
  reasonModelRecordSchema,
  type ReasonModelRecord,
  type ReasonText,
} from '../../schemas/reasons.ts';
import { REPORT_AGGREGATES, type AccuracyReport, type ReportRow } from '../../schemas/service-classifier.ts';
import { createServiceClient, isServiceError, type ServiceClient } from '../../service/index.ts';

export const summary = 'call reasons: trains, lists, shows and deletes text classification models';
export const help = `Usage: callpipe reasons train <labels.csv | s3://bucket/key> [--text customer|summary] [--out s3://…] [--timeout S] [--json]
       callpipe reasons list | status <model id> | delete <model id> [--json]

Why customers call, learned from examples (spec 03 text classification; Enterprise accounts). A labelled
file is CSV in one of two forms:
  class,text          one example a line (a text with commas, quotes or line breaks in double quotes)
  callId,class        under that header line: each example built from the call's stored, redacted
                      result.json under --out (default the configured output prefix): what the customer
                      said (its first CALLPIPE_REASONS_CHARS characters, default 600), or the summary
                      (--text, default CALLPIPE_REASONS_TEXT, else customer)
Checked before anything is sent: at most 10 MB and ${TRAINING_LIMITS.lines} lines, a class name of at most
${TRAINING_LIMITS.classChars} characters, a text of at most ${TRAINING_LIMITS.textChars}, at least ${TRAINING_LIMITS.minClasses} classes and ${TRAINING_LIMITS.minPerClass} examples of each; the
account keeps at most ${MAX_CLASSIFIER_MODELS} models. train waits for the model (a progress line on stderr), prints its
accuracy report (cross-validated by the service) and stores it as <out>reasons/<model id>.json. Calls are
classified with the model named by CALLPIPE_REASONS_MODEL (or the rule file's reasons.model).
A model of single lines (class,text lines, each one line as it is said) serves a rule file's classifier
rules instead: { kind: classifier, model: <model id>, class: <class>, speaker: agent, above: 0.5 } counts
the speaker's lines scored above the threshold (docs/insights.md, "Lines classified by a trained model").

  list               the account's models, their state and creation time
  status <model id>  a model's state and accuracy report
  delete <model id>  deletes a model (the account then has room for another)
  --timeout S        train: longest wait for the model, seconds (default 3600)
  --json             machine-readable output`;

const POLL_MS = 500;
const PROGRESS_EVERY_MS = 10_000;

const FULL_ACCOUNT =
  `the account already holds ${MAX_CLASSIFIER_MODELS} text classification models, the most the service keeps: ` +
  'delete one first with `callpipe reasons delete <model id>` (`callpipe reasons list` shows them)';

function fail(operation: string, err: unknown): never {
  if (isServiceError(err)) {
    if (operation === 'train' && err.httpStatus === 409)
      throw new CliError(`reasons train: ${FULL_ACCOUNT}`, 1);
    throw new CliError(`reasons ${operation}: ${err.message}`, 1);
  }
  throw err;
}

/** A labelled file's bytes, local or s3://, refused beyond the service's 10 MB. */
async function readLabels(config: Config, spelling: string): Promise<Buffer> {
  const s3 = parseS3Url(spelling);
  if (!s3) {
    try {
      return Buffer.from(readUserFile(spelling, TRAINING_LIMITS.bytes), 'utf8');
    } catch (err) {
      if (err instanceof UserFileError) throw new CliError(`reasons train: ${err.message}`);
      throw err;
    }
  }
  const store = createObjectStore(config.s3).withBucket(s3.bucket);
  const info = await store.head(s3.key);
  if (!info) throw new CliError(`reasons train: ${spelling}: no such object`);
  if ((info.size ?? 0) > TRAINING_LIMITS.bytes)
    throw new CliError(`reasons train: ${spelling}: larger than the service's 10 MB training file`);
  return store.getBuffer(s3.key);
}

function checked(spelling: string, set: TrainingSet): void {
  const first = set.problems[0];
  if (!first) return;
  const where = first.line !== undefined ? ` line ${first.line}` : '';
  const more = set.problems.length > 1 ? ` (and ${set.problems.length - 1} more problem(s))` : '';
  throw new CliError(`reasons train: ${spelling}${where}: ${first.message}${more}; nothing was sent`);
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** The report as a table: a row per class, then accuracy and the averages. */
export function reportTable(report: AccuracyReport): string {
  const rowOf = (name: string, r: ReportRow) => [
    name,
    pct(r.precision),
    pct(r.recall),
    pct(r['f1-score']),
    String(r.support),
  ];
  const classes = Object.entries(report).filter(
    ([k]) => !(REPORT_AGGREGATES as readonly string[]).includes(k),
  );
  const rows = [['class', 'precision', 'recall', 'f1', 'support']];
  for (const [name, r] of classes) rows.push(rowOf(name, r as ReportRow));
  for (const k of ['macro avg', 'weighted avg'] as const)
    if (typeof report[k] === 'object') rows.push(rowOf(k, report[k]));
  const accuracy = typeof report.accuracy === 'number' ? `\naccuracy ${pct(report.accuracy)}` : '';
  return `${textTable(rows)}${accuracy}`;
}

/** Waits for the model to leave `processing`, a progress line on stderr now and then. */
async function waitForModel(client: ServiceClient, id: string, timeoutS: number, quiet: boolean) {
  const began = Date.now();
  let said = 0;
  for (;;) {
    const { result } = await client.classifier.status(id);
    if (result.model_status !== 'processing') return result;
    const waited = Date.now() - began;
    if (waited > timeoutS * 1000)
      throw new CliError(
        `reasons train: model ${id} still processing after ${timeoutS} s; follow it with \`callpipe reasons status ${id}\``,
        1,
      );
    if (!quiet && waited - said >= PROGRESS_EVERY_MS) {
      said = waited;
      process.stderr.write(`model ${id}: processing (${Math.round(waited / 1000)} s)\n`);
    }
    await sleep(POLL_MS);
  }
}

interface TrainValues {
  text?: string | undefined;
  out?: string | undefined;
  timeout?: string | undefined;
  json: boolean;
}

async function train(
  config: Config,
  client: ServiceClient,
  spelling: string,
  values: TrainValues,
): Promise<number> {
  const text = (values.text ?? config.insights.reasonsText) as ReasonText;
  if (!(REASON_TEXTS as readonly string[]).includes(text))
    throw new CliError(`reasons train: --text must be one of ${REASON_TEXTS.join(', ')}`);
  const timeoutS = values.timeout === undefined ? 3600 : Number(values.timeout);
  if (!(timeoutS > 0)) throw new CliError('reasons train: --timeout must be a positive number of seconds');
  const output = outputLocation(values.out, config);
  const results = createObjectStore(config.s3).withBucket(output.bucket);
  const set = await trainingSet(await readLabels(config, spelling), () => ({
    results,
    output,
    text: { text, chars: config.insights.reasonsChars },
  }));
  checked(spelling, set);
  const models = await client.classifier.list().catch((err: unknown) => fail('train', err));
  if (models.result.length >= MAX_CLASSIFIER_MODELS) throw new CliError(`reasons train: ${FULL_ACCOUNT}`, 1);
  const { result: id } = await client.classifier
    .learn(trainingCsv(set.rows))
    .catch((err: unknown) => fail('train', err));
  if (!values.json) process.stderr.write(`model ${id}: uploaded ${set.rows.length} lines, training…\n`);
  const status = await waitForModel(client, id, timeoutS, values.json);
  const listed = (await client.classifier.list()).result.find((m) => m.model_id === id);
  const classes: Record<string, number> = {};
  for (const r of set.rows) classes[r.class] = (classes[r.class] ?? 0) + 1;
  const record: ReasonModelRecord = reasonModelRecordSchema.parse({
    modelId: id,
    status: status.model_status,
    trainedAt: listed?.created_at ?? null,
    text: set.text?.text ?? null,
    chars: set.text?.chars ?? null,
    lines: set.rows.length,
    classes,
    report: status.report ?? {},
  });
  const key = reasonModelKey(output, id);
  const where = `s3://${output.bucket}/${key}`;
  if (!values.json) {
    if (status.model_status === 'failed')
      console.log(`model ${id} failed to train: the service learnt nothing from these examples`);
    else console.log(`${reportTable(record.report)}\nmodel ${id} completed`);
  }
  try {
    await results.put(key, `${JSON.stringify(record, null, 2)}\n`, {
      contentType: 'application/json; charset=utf-8',
    });
  } catch (err) {
    throw new CliError(
      `reasons train: model ${id} trained, but its report could not be stored at ${where}: ${(err as Error).message}`,
      1,
    );
  }
  if (values.json) console.log(JSON.stringify({ ...record, stored: where }));
  else {
    console.log(`report stored at ${where}`);
    if (status.model_status === 'completed')
      console.log(`classify calls with it: CALLPIPE_REASONS_MODEL=${id}`);
  }
  return status.model_status === 'completed' ? 0 : 1;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('reasons', argv, {
    text: { type: 'string' },
    out: { type: 'string' },
    timeout: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const [operation, arg, ...rest] = positionals;
  const takesArg = ['train', 'status', 'delete'];
  if (!operation || ![...takesArg, 'list'].includes(operation) || rest.length > 0)
    throw new CliError('reasons: train <file> | list | status <model id> | delete <model id> (see --help)');
  if (takesArg.includes(operation) !== (arg !== undefined))
    throw new CliError(
      operation === 'list'
        ? 'reasons list takes no argument'
        : `reasons ${operation}: give the ${operation === 'train' ? 'labelled file' : 'model id'}`,
    );
  const { config } = pipelineConfig();
  const client = createServiceClient(config.service);
  const print = (json: unknown, text: string) => console.log(values.json ? JSON.stringify(json) : text);
  switch (operation) {
    case 'train':
      return train(config, client, arg!, values);
    case 'list': {
      const { result } = await client.classifier.list().catch((err: unknown) => fail(operation, err));
      const configured = config.insights.reasonsModel;
      const rows = result.map((m) => [
        m.model_id,
        m.model_status,
        m.created_at,
        m.model_id === configured ? 'configured' : '',
      ]);
      print(
        result,
        result.length === 0
          ? 'no models'
          : `${textTable([['model', 'status', 'created', ''], ...rows])}\n${result.length} of ${MAX_CLASSIFIER_MODELS} models`,
      );
      return 0;
    }
    case 'status': {
      const { result } = await client.classifier.status(arg!).catch((err: unknown) => fail(operation, err));
      const report =
        result.report && Object.keys(result.report).length > 0 ? `\n${reportTable(result.report)}` : '';
      print(result, `${arg}: ${result.model_status}${report}`);
      return 0;
    }
    default:
      await client.classifier.delete(arg!).catch((err: unknown) => fail(operation, err));
      print({ modelId: arg, deleted: true }, `deleted model ${arg}`);
      return 0;
  }
}
