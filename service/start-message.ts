/**
 * The start message of a recognition session (spec 02, Start parameters), validated client-side with
 * the spec's rules so that a bad parameter fails at once with a readable reason instead of costing a
 * request and coming back as `410 Invalid Parameter`.
 */
import { startMessageSchema, type StartMessage, type TemporaryWord } from '../schemas/service-asr.ts';
import { invalidInput } from './errors.ts';
import { dictionaryEntryProblem, MAX_TEMPORARY_WORDS } from './dictionary.ts';

/** Recognition models and their bandwidth (spec 02, Recognition models). */
export const ASR_MODELS = {
  'ja-gen_tf-16': 16000,
  'ja-gen_sf-16': 16000,
  'ja-gen_tf-08': 8000,
  'ja-mdl1_nrw-08': 8000,
  'ja-mdl2_nrw-08': 8000,
  'en_en-gen_sf-16': 16000,
} as const;

/** Models each option is valid for (spec 02, Behavior of the options 1–3). */
const FILLER_MODELS: readonly string[] = [
  'ja-gen_tf-16',
  'ja-gen_sf-16',
  'ja-gen_tf-08',
  'ja-mdl1_nrw-08',
  'ja-mdl2_nrw-08',
];
const PUNCTUATION_MODELS: readonly string[] = [
  'ja-gen_tf-16',
  'ja-gen_tf-08',
  'ja-mdl1_nrw-08',
  'ja-mdl2_nrw-08',
];
const READING_MODELS: readonly string[] = FILLER_MODELS;
/** Mu-law only for the 8 kHz models (spec 02, Audio formats). */
const MULAW_MODELS: readonly string[] = ['ja-gen_tf-08', 'ja-mdl1_nrw-08', 'ja-mdl2_nrw-08'];

/** Sample rates with guaranteed correct operation (spec 02, Audio formats). */
const SUPPORTED_SAMPLE_RATES: readonly number[] = [
  8000, 11025, 16000, 22050, 32000, 44100, 48000, 88200, 96000,
];
const MULAW_SAMPLE_RATE = 8000;
/** N-best range (spec 02, Limits). */
const MAX_RESULTS_RANGE = { min: 1, max: 30 } as const;
/** Domain id: 8 alphanumeric characters (spec 02, Recognition models). */
const DOMAIN_ID_PATTERN = /^[A-Za-z0-9]{8}$/;

export type AudioCodec = 'pcm' | 'mulaw';

/** Recognition options (spec 02, Start parameters); unset ones are not sent and take the service default. */
export interface RecognitionOptions {
  /** Output fillers in square brackets; Japanese models only. Service default false. */
  filler?: boolean;
  /** Output punctuation; `ja-*-tf-*` and telephone models only. Service default false. */
  punctuation?: boolean;
  /** Add a katakana reading to each sentence; Japanese models only. Service default false. */
  reading?: boolean;
  /** Spaces between words. Service default true (recommended for English). */
  delimiter?: boolean;
  /** Interim results (`recognized` type 0). Service default false. */
  enableProgress?: boolean;
  /** N-best 1–30. Service default 1. */
  maxResults?: number;
  /** Continuous recognition; only `true` is valid (the default). */
  enableContinuous?: boolean;
}

export interface StartParams {
  model: string;
  domainId: string;
  codec: AudioCodec;
  sampleRate: number;
  options?: RecognitionOptions | undefined;
  /** Temporary dictionary for this session only. */
  words?: readonly TemporaryWord[] | undefined;
}

const ENDPOINT = 'speech_recognition start';

/** Checks one temporary dictionary entry; returns the reason it is invalid, or undefined. */
export function temporaryWordProblem(word: TemporaryWord, index: number): string | undefined {
  const problem = dictionaryEntryProblem(word);
  return problem && `words[${index}]${problem.field ? `.${problem.field}` : ''}: ${problem.why}`;
}

/** Every problem of the start parameters, in the order of the spec's table; empty when valid. */
export function startParamProblems(params: StartParams): string[] {
  const problems: string[] = [];
  const { model, codec, sampleRate } = params;
  const modelRate = (ASR_MODELS as Record<string, number>)[model];
  if (modelRate === undefined) problems.push(`model: unknown model id ${JSON.stringify(model)}`);
  if (!DOMAIN_ID_PATTERN.test(params.domainId)) problems.push('domainId: must be 8 alphanumeric characters');
  if (codec !== 'pcm' && codec !== 'mulaw') problems.push(`codec: must be pcm or mulaw`);
  if (!Number.isInteger(sampleRate)) problems.push('sampleRate: must be an integer');
  if (codec === 'mulaw') {
    if (sampleRate !== MULAW_SAMPLE_RATE) problems.push('sampleRate: must be 8000 for mulaw');
    if (modelRate !== undefined && !MULAW_MODELS.includes(model))
      problems.push(`codec: mulaw needs an 8 kHz model, not ${model}`);
  } else if (codec === 'pcm') {
    if (modelRate !== undefined && sampleRate < modelRate) {
      problems.push(`sampleRate: must be at least the model rate ${modelRate}`);
    } else if (!SUPPORTED_SAMPLE_RATES.includes(sampleRate)) {
      problems.push(`sampleRate: ${sampleRate} is not one of ${SUPPORTED_SAMPLE_RATES.join(', ')}`);
    }
  }
  const o = params.options ?? {};
  if (o.enableContinuous === false) problems.push('options.enableContinuous: only true is valid');
  if (o.maxResults !== undefined) {
    if (
      !Number.isInteger(o.maxResults) ||
      o.maxResults < MAX_RESULTS_RANGE.min ||
      o.maxResults > MAX_RESULTS_RANGE.max
    ) {
      problems.push('options.maxResults: must be an integer from 1 to 30');
    }
  }
  if (modelRate !== undefined) {
    if (o.filler && !FILLER_MODELS.includes(model)) problems.push(`options.filler: not valid for ${model}`);
    if (o.punctuation && !PUNCTUATION_MODELS.includes(model))
      problems.push(`options.punctuation: not valid for ${model}`);
    if (o.reading && !READING_MODELS.includes(model))
      problems.push(`options.reading: not valid for ${model}`);
  }
  const words = params.words;
  if (words !== undefined) {
    if (words.length > MAX_TEMPORARY_WORDS) {
      problems.push(`words: ${words.length} entries, at most ${MAX_TEMPORARY_WORDS}`);
    } else {
      words.forEach((word, i) => {
        const problem = temporaryWordProblem(word, i);
        if (problem) problems.push(problem);
      });
    }
  }
  return problems;
}

/**
 * Builds the start message (flat dotted keys inside `param`), or throws an `invalid` ServiceError
 * listing every problem.
 */
export function buildStartMessage(params: StartParams): StartMessage {
  const problems = startParamProblems(params);
  if (problems.length > 0) throw invalidInput(ENDPOINT, problems.join('; '));
  const o = params.options ?? {};
  const param: StartMessage['param'] = {
    'baseParam.samplingRate': params.sampleRate,
    'recognizeParameter.domainId': params.domainId,
    // Always explicit: the service default is pcm, and a mu-law stream read as PCM is noise.
    'baseParam.audioCodec': params.codec,
  };
  if (o.filler !== undefined) param['baseParam.filler'] = o.filler;
  if (o.punctuation !== undefined) param['baseParam.punctuation'] = o.punctuation;
  if (o.reading !== undefined) param['baseParam.reading'] = o.reading;
  if (o.delimiter !== undefined) param['baseParam.delimiter'] = o.delimiter;
  if (o.enableContinuous !== undefined) param['recognizeParameter.enableContinuous'] = o.enableContinuous;
  if (o.enableProgress !== undefined) param['recognizeParameter.enableProgress'] = o.enableProgress;
  if (o.maxResults !== undefined) param['recognizeParameter.maxResults'] = o.maxResults;
  const message: StartMessage = { msg: { msgname: 'start' }, param };
  if (params.words !== undefined && params.words.length > 0) {
    message.words = params.words.map((w) => ({
      surface: w.surface,
      reading: w.reading,
      ...(w.prob !== undefined ? { prob: w.prob } : {}),
    }));
  }
  return startMessageSchema.parse(message);
}
