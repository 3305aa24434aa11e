/**
 * Text classification (spec 03, not for Developers accounts): learn (multipart `dataset`, optional
 * `type`), classify, list, status, delete; at most 10 models per account. A model is `processing` from
 * learn until its training time has passed on the emulator's clock (scaled by `speed`), then `completed`
 * with its cross-validated report, or `failed` when the training texts give nothing to tell the classes
 * apart (every class's texts the same). Codes and texts the spec does not give are chosen in the README.
 */
import { randomBytes } from 'node:crypto';
import { readTrainingCsv } from '../../schemas/classifier-dataset.ts';
import { MAX_CLASSIFIER_MODELS, TRAINING_LIMITS } from '../../schemas/classifier-limits.ts';
import { boundaryOf, parseMultipart } from '../../schemas/multipart.ts';
import type { AccuracyReport } from '../../schemas/service-classifier.ts';
import type { Account } from '../accounts.ts';
import type { Answer } from '../answer.ts';
import { mediaType } from '../http.ts';
import { classify, crossValidatedReport, train, type LabelledText, type NaiveBayes } from './naive-bayes.ts';

/** Training time: a base plus a little per line, in emulator seconds (divided by `speed`). */
const TRAINING_BASE_SECONDS = 3;
const TRAINING_SECONDS_PER_LINE = 0.01;
const CONFLICT_MESSAGE =
  'the request could not be completed due to a conflict with the current state of the resource';

interface StoredModel {
  id: string;
  createdAt: number;
  readyAt: number;
  outcome: { model: NaiveBayes; report: AccuracyReport } | 'failed';
}

function ok(result?: unknown): Answer {
  const json = result === undefined ? { status: 0, message: 'OK' } : { result, status: 0, message: 'OK' };
  return { status: 200, json, log: { code: 0 } };
}

function refuse(httpStatus: number, message: string): Answer {
  return { status: httpStatus, json: { status: httpStatus, message }, log: { code: httpStatus } };
}

/** `2026-11-28T11:00:00.000+00:00`: the creation time with its UTC offset, as the spec shows it. */
function withOffset(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+00:00');
}

/** Nothing tells the classes apart: every class holds the same set of texts. */
function indistinguishable(rows: readonly LabelledText[]): boolean {
  const sets = new Map<string, Set<string>>();
  for (const r of rows) sets.set(r.class, (sets.get(r.class) ?? new Set()).add(r.text.trim()));
  const keys = [...sets.values()].map((s) => [...s].sort().join('\n'));
  return keys.every((k) => k === keys[0]);
}

export class ClassifierModels {
  readonly #byAccount = new Map<string, Map<string, StoredModel>>();
  readonly #now: () => number;
  readonly #speed: number;

  constructor(now: () => number, speed: number) {
    this.#now = now;
    this.#speed = speed;
  }

  #models(account: Account): Map<string, StoredModel> {
    let models = this.#byAccount.get(account.clientId);
    if (!models) this.#byAccount.set(account.clientId, (models = new Map()));
    return models;
  }

  #status(m: StoredModel): 'processing' | 'completed' | 'failed' {
    if (this.#now() < m.readyAt) return 'processing';
    return m.outcome === 'failed' ? 'failed' : 'completed';
  }

  learn(account: Account, contentType: string | undefined, body: Buffer): Answer {
    if (mediaType(contentType) !== 'multipart/form-data') return refuse(415, 'invalid Content-Type');
    const boundary = boundaryOf(contentType);
    const parts = boundary ? parseMultipart(body, boundary) : undefined;
    if (!parts) return refuse(400, 'request containing invalid parameters');
    const dataset = parts.find((p) => p.name === 'dataset');
    if (!dataset) return refuse(400, 'dataset : must not be null');
    if (dataset.data.byteLength > TRAINING_LIMITS.bytes) return refuse(413, 'request entity too large');
    const type = parts
      .find((p) => p.name === 'type')
      ?.data.toString('utf8')
      .trim();
    if (type !== undefined && type !== 'default' && type !== 'kuzure')
      return refuse(400, `type : ${type} is invalid`);
    const models = this.#models(account);
    if (models.size >= MAX_CLASSIFIER_MODELS) return refuse(409, CONFLICT_MESSAGE);
    const { rows, problems } = readTrainingCsv(dataset.data);
    if (problems.length > 0) return refuse(400, problems[0]!.message);
    const now = this.#now();
    const seconds = TRAINING_BASE_SECONDS + rows.length * TRAINING_SECONDS_PER_LINE;
    const id = randomBytes(12).toString('hex');
    models.set(id, {
      id,
      createdAt: now,
      readyAt: now + (seconds * 1000) / this.#speed,
      outcome: indistinguishable(rows)
        ? 'failed'
        : { model: train(rows), report: crossValidatedReport(rows) },
    });
    return ok({ model_id: id });
  }

  list(account: Account): Answer {
    return ok(
      [...this.#models(account).values()].map((m) => ({
        model_id: m.id,
        model_status: this.#status(m),
        created_at: withOffset(m.createdAt),
      })),
    );
  }

  status(account: Account, id: string): Answer {
    const m = this.#models(account).get(id);
    if (!m) return refuse(404, `model_id : ${id} is invalid`);
    const status = this.#status(m);
    const report = status === 'completed' && m.outcome !== 'failed' ? m.outcome.report : {};
    return ok({ model_status: status, report });
  }

  classify(account: Account, id: string, value: unknown): Answer {
    const m = this.#models(account).get(id);
    if (!m) return refuse(404, `model_id : ${id} is invalid`);
    const text = (value as { text?: unknown } | null | undefined)?.text;
    if (text === undefined || text === null) return refuse(400, 'text : must not be null');
    if (typeof text !== 'string') return refuse(400, `text : invalid type(${typeof text})`);
    if (text.trim() === '') return refuse(400, 'text : must not be blank');
    if ([...text].length > TRAINING_LIMITS.textChars)
      return refuse(400, `text : must be less than ${TRAINING_LIMITS.textChars} character`);
    if (this.#status(m) !== 'completed' || m.outcome === 'failed') return refuse(409, CONFLICT_MESSAGE);
    return ok(classify(m.outcome.model, text));
  }

  delete(account: Account, id: string): Answer {
    return this.#models(account).delete(id) ? ok() : refuse(404, 'there is no item to delete');
  }
}
