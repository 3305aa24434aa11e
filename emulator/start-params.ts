/**
 * Validation of a start message (spec 02, "Start parameters", "Temporary dictionary entry" and the 410
 * details of "Errors"). Used by stream and file recognition alike.
 *
 * Accepted as a real client may send them: numbers as strings (`"8000"`), booleans as strings
 * (`"true"`), `words: []`, `words: null`, keys in any order. The keys of `param` are flat names with a dot
 * (`baseParam.samplingRate`), as the spec says; a nested `baseParam: {...}` object is not read.
 * Where the spec gives no detail text (maxResults, booleans, codec), the detail follows the spec's own
 * pattern: `param.<key> is invalid`.
 */
import type { AudioCodec } from './audio.ts';
import { asrErrors, type AsrError } from './asr-errors.ts';
import { MODELS, type ModelInfo } from './models.ts';

/** Spec 02, Limits. */
const MAX_RESULTS_RANGE = { min: 1, max: 30 } as const;
const MAX_TEMPORARY_WORDS = 1000;
const MAX_WORD_BYTES = 251;
const WORD_PROB_RANGE = { min: 1, max: 100 } as const;

export interface StartParams {
  model: string;
  modelInfo: ModelInfo;
  samplingRate: number;
  codec: AudioCodec;
  domainId: string;
  enableContinuous: boolean;
  enableProgress: boolean;
  maxResults: number;
  filler: boolean;
  punctuation: boolean;
  reading: boolean;
  delimiter: boolean;
  words: { surface: string; reading: string; prob: number }[];
}

type Result = { ok: true; params: StartParams } | { ok: false; error: AsrError };

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return undefined;
}

function asBoolean(value: unknown, fallback: boolean): boolean | undefined {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return undefined;
}

const SURFACE_ILLEGAL = /[|/:;[\]\t"]/;
const KATAKANA = /^[\u30A1-\u30FA\u30FC\u30FD\u30FE]+$/;

/** Spec 02, Dictionary operation errors: an upload of more lines is refused. */
export const MAX_USER_DICTIONARY_LINES = 5000;

/** Temporary words (`max` {@link MAX_TEMPORARY_WORDS}) or the lines of a user dictionary upload. */
export function validateWords(
  words: unknown,
  max: number = MAX_TEMPORARY_WORDS,
): { ok: true; words: StartParams['words'] } | { ok: false; error: AsrError } {
  const bad = (detail: string) => ({ ok: false as const, error: asrErrors.invalidParameter(detail) });
  if (words === undefined || words === null) return { ok: true, words: [] };
  if (!Array.isArray(words)) return bad('Invalid Parameter -> List is null');
  if (words.length > max)
    return bad(
      max === MAX_TEMPORARY_WORDS
        ? `Cascade words exceeded ${MAX_TEMPORARY_WORDS}`
        : `Invalid Parameter -> List Exceed ${max} lines`,
    );
  const out: StartParams['words'] = [];
  for (const item of words) {
    const entry = asRecord(item);
    const surface = entry?.surface;
    const reading = entry?.reading;
    if (
      !entry ||
      ((surface === undefined || surface === null) && (reading === undefined || reading === null))
    ) {
      return bad('Invalid Parameter -> List is null');
    }
    if (typeof surface !== 'string' || surface === '') return bad('Surface empty');
    if (typeof reading !== 'string' || reading === '') return bad('Reading empty');
    if (SURFACE_ILLEGAL.test(surface)) return bad('Surface illegal');
    if (!KATAKANA.test(reading)) return bad('Reading illegal');
    let prob = 30;
    if (entry.prob !== undefined && entry.prob !== null) {
      const p = asNumber(entry.prob);
      if (p === undefined || !Number.isInteger(p) || p < WORD_PROB_RANGE.min || p > WORD_PROB_RANGE.max) {
        return bad('Prob illegal');
      }
      prob = p;
    }
    if (Buffer.byteLength(surface) + Buffer.byteLength(reading) > MAX_WORD_BYTES)
      return bad('Surface too long');
    out.push({ surface, reading, prob });
  }
  return { ok: true, words: out };
}

export function validateStart(model: string, body: unknown): Result {
  const bad = (detail: string): Result => ({ ok: false, error: asrErrors.invalidParameter(detail) });
  const root = asRecord(body);
  if (asRecord(root?.msg)?.msgname !== 'start') return bad('msg.msgname is invalid');
  const modelInfo = MODELS[model];
  if (!modelInfo) return bad('Invalid Model Name');
  const param = asRecord(root!.param) ?? {};

  const domainId = param['recognizeParameter.domainId'];
  if (typeof domainId !== 'string' || !/^[A-Za-z0-9]{8}$/.test(domainId)) return bad('Invalid domainid');

  const codecRaw = param['baseParam.audioCodec'] ?? 'pcm';
  if (codecRaw !== 'pcm' && codecRaw !== 'mulaw') return bad('param.baseParam.audioCodec is invalid');
  const codec: AudioCodec = codecRaw;

  const rate = asNumber(param['baseParam.samplingRate']);
  if (rate === undefined || !Number.isInteger(rate) || rate < modelInfo.rate) {
    return bad('param.baseParam.samplingRate is invalid (must be at least the model bandwidth)');
  }
  if (codec === 'mulaw' && rate !== 8000) return bad('param.baseParam.samplingRate must be 8000 Hz');

  let maxResults = 1;
  const mr = param['recognizeParameter.maxResults'];
  if (mr !== undefined && mr !== null) {
    const n = asNumber(mr);
    if (n === undefined || !Number.isInteger(n) || n < MAX_RESULTS_RANGE.min || n > MAX_RESULTS_RANGE.max) {
      return bad('param.recognizeParameter.maxResults is invalid');
    }
    maxResults = n;
  }

  const flags = {
    enableContinuous: ['recognizeParameter.enableContinuous', true],
    enableProgress: ['recognizeParameter.enableProgress', false],
    filler: ['baseParam.filler', false],
    punctuation: ['baseParam.punctuation', false],
    reading: ['baseParam.reading', false],
    delimiter: ['baseParam.delimiter', true],
  } as const;
  const values: Record<string, boolean> = {};
  for (const [name, [key, fallback]] of Object.entries(flags)) {
    const v = asBoolean(param[key], fallback);
    if (v === undefined) return bad(`param.${key} is invalid`);
    values[name] = v;
  }

  const words = validateWords(root!.words);
  if (!words.ok) return words;

  return {
    ok: true,
    params: {
      model,
      modelInfo,
      samplingRate: rate,
      codec,
      domainId,
      enableContinuous: values.enableContinuous!,
      enableProgress: values.enableProgress!,
      maxResults,
      // Options a model does not support are ignored, not refused (spec 02: "Valid only for ...").
      filler: values.filler! && modelInfo.filler,
      punctuation: values.punctuation! && modelInfo.punctuation,
      reading: values.reading! && modelInfo.reading,
      delimiter: values.delimiter!,
      words: words.words,
    },
  };
}
