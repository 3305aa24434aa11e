/**
 * Text classification (spec 03, Enterprise accounts): learn a model from a training file (multipart part
 * `dataset`), its status and accuracy report, classify a text, list and delete models. Paths under
 * `/nlp/v1/classifier/models`; the common envelope. The training file is checked by the caller
 * (`schemas/classifier-dataset.ts`); the service's own refusal still arrives as an `invalid` error.
 */
import { z } from 'zod';
import { buildMultipart } from '../schemas/multipart.ts';
import {
  classifyResultSchema,
  learnResultSchema,
  listModelsResultSchema,
  modelStatusResultSchema,
  type ClassifierModelSummary,
  type ClassifyResult,
  type ModelStatusResult,
} from '../schemas/service-classifier.ts';
import type { ClientContext } from './context.ts';
import { requestNlp, type NlpCallOptions, type NlpResponse } from './nlp/call.ts';

const CLASSIFIER_MODELS_PATH = '/nlp/v1/classifier/models';
const modelPath = (id: string) => `${CLASSIFIER_MODELS_PATH}/${encodeURIComponent(id)}`;

export interface ClassifierClient {
  /** Uploads a training file; the new model's id (it is `processing` until trained). */
  learn(
    dataset: string | Buffer,
    options?: NlpCallOptions & { type?: 'default' | 'kuzure' },
  ): Promise<NlpResponse<string>>;
  status(modelId: string, options?: NlpCallOptions): Promise<NlpResponse<ModelStatusResult>>;
  /** Every class with its score, best first. */
  classify(modelId: string, text: string, options?: NlpCallOptions): Promise<NlpResponse<ClassifyResult>>;
  list(options?: NlpCallOptions): Promise<NlpResponse<ClassifierModelSummary[]>>;
  delete(modelId: string, options?: NlpCallOptions): Promise<NlpResponse<null>>;
}

export function classifierClient(ctx: ClientContext): ClassifierClient {
  return {
    async learn(dataset, options = {}) {
      const { body, contentType } = buildMultipart([
        { name: 'dataset', contentType: 'text/csv; charset=UTF-8', data: dataset },
        ...(options.type ? [{ name: 'type', data: options.type }] : []),
      ]);
      const request = { method: 'POST' as const, body, contentType };
      const res = await requestNlp(ctx, CLASSIFIER_MODELS_PATH, request, learnResultSchema, options);
      return { result: res.result.model_id, cost: res.cost };
    },
    status: (id, options) =>
      requestNlp(ctx, modelPath(id), { method: 'GET' }, modelStatusResultSchema, options),
    async classify(id, text, options) {
      const body = JSON.stringify({ text });
      const request = { method: 'POST' as const, body, contentType: 'application/json;charset=UTF-8' };
      const res = await requestNlp(ctx, `${modelPath(id)}/classify`, request, classifyResultSchema, options);
      return { result: [...res.result].sort((a, b) => b.score - a.score), cost: res.cost };
    },
    list: (options) =>
      requestNlp(ctx, CLASSIFIER_MODELS_PATH, { method: 'GET' }, listModelsResultSchema, options),
    async delete(id, options) {
      const res = await requestNlp(ctx, modelPath(id), { method: 'DELETE' }, z.unknown().optional(), options);
      return { result: null, cost: res.cost };
    },
  };
}
