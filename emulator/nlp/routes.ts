/**
 * The text-analysis endpoints the emulator serves (spec 01 and 03), with the common envelope
 * `{result, status, message}` and the `message` each endpoint was recorded with (golden): `OK` for
 * remove_filler and sentiment, `""` for keyword, ne and sentence_type, none for summary (`ok` for the call-center
 * model, as spec 03 says). Content types as recorded, too.
 *
 * Validation errors (spec 01 rule 1; codes not shown, chosen here): HTTP 400 and envelope status 400
 * with a message in spec 03's parameter-text form (`text : must not be null`); summarization answers
 * 17001 (spec 03). JSON `null` counts as absent for optional fields, as the live service accepted.
 */
import type { Account } from '../accounts.ts';
import type { Answer } from '../answer.ts';
import { DEFAULT_MAX_KEYWORDS, extractKeywords } from './keyword.ts';
import { extractNamedEntities } from './named-entities.ts';
import { removeFiller } from './remove-filler.ts';
import { analyzeSentiment } from './sentiment.ts';
import { classifySentence } from './sentence-type.ts';
import { summarize } from './summary.ts';

/** Spec 01, Shared request parameters. */
const DIC_TYPES = [
  'IT',
  'automobile',
  'chemistry',
  'company',
  'construction',
  'economy',
  'energy',
  'institution',
  'machinery',
  'medical',
  'metal',
] as const;

/** Spec 03, Limits. */
const SUMMARY_LIMITS = { document: [10, 5000], sentLen: [1, 100], charLen: [10, 2500] } as const;

/** Endpoint name → the versions it is served under (spec 01 Endpoints; summary also as recorded). */
export const NLP_ENDPOINTS: Record<string, string[]> = {
  remove_filler: ['beta'],
  sentiment: ['v1'],
  keyword: ['v1'],
  ne: ['v1'],
  sentence_type: ['v1'],
  summary: ['v1', 'beta'],
};
/** Endpoints of the spec the emulator does not emulate: HTTP 501. */
export const NLP_NOT_EMULATED = [
  'parse',
  'normalize_ne/company',
  'coreference',
  'similarity',
  'user_attribute',
  'detect_misrecognition',
];

export const JSON_UTF8 = 'application/json;charset=utf-8';

export function envelopeError(
  httpStatus: number,
  status: number,
  message: string,
  result: unknown = {},
): Answer {
  return { status: httpStatus, json: { result, status, message }, log: { code: status } };
}

class Invalid extends Error {}

type Body = Record<string, unknown>;
const present = (v: unknown) => v !== undefined && v !== null;

function requireString(body: Body, key: string): string {
  const v = body[key];
  if (!present(v)) throw new Invalid(`${key} : must not be null`);
  if (typeof v !== 'string') throw new Invalid(`${key} : invalid type(${typeof v})`);
  if (v === '') throw new Invalid(`${key} : must not be empty`);
  return v;
}

function optionalBoolean(body: Body, key: string): boolean {
  const v = body[key];
  if (!present(v)) return false;
  if (typeof v !== 'boolean') throw new Invalid(`${key} : invalid type(${typeof v})`);
  return v;
}

function optionalInt(body: Body, key: string, min: number, max: number): number | undefined {
  const v = body[key];
  if (!present(v)) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Invalid(`${key} : invalid type(${typeof v})`);
  if (v < min || v > max) throw new Invalid(`${key} : must be between ${min} and ${max}`);
  return v;
}

function checkType(body: Body): void {
  const v = body.type;
  if (present(v) && v !== 'default' && v !== 'kuzure') throw new Invalid(`type : ${String(v)} is invalid`);
}

function checkDicType(body: Body, account: Account): void {
  const v = body.dic_type;
  if (!present(v)) return;
  if (account.kind !== 'Enterprise') throw new Invalid('dic_type : is available to Enterprise accounts only');
  if (!Array.isArray(v)) throw new Invalid(`dic_type : invalid type(${typeof v})`);
  for (const item of v) {
    if (!(DIC_TYPES as readonly unknown[]).includes(item))
      throw new Invalid(`dic_type : ${String(item)} is invalid`);
  }
}

/** Runs one text-analysis call on a parsed JSON body. `version` is `v1` or `beta` (already checked). */
export function handleNlp(name: string, version: string, value: unknown, account: Account): Answer {
  const body: Body = value && typeof value === 'object' && !Array.isArray(value) ? (value as Body) : {};
  const isSummary = name === 'summary';
  try {
    if (!value || typeof value !== 'object' || Array.isArray(value))
      throw new Invalid('request body : must be a JSON object');
    switch (name) {
      case 'remove_filler': {
        const text = requireString(body, 'text');
        const result = removeFiller(text, optionalBoolean(body, 'do_segment'));
        return { status: 200, json: { result, status: 0, message: 'OK' }, log: { code: 0 } };
      }
      case 'sentiment': {
        const result = analyzeSentiment(requireString(body, 'sentence'));
        return { status: 200, json: { result, status: 0, message: 'OK' }, log: { code: 0 } };
      }
      case 'sentence_type': {
        const sentence = requireString(body, 'sentence');
        checkType(body);
        return {
          status: 200,
          json: { result: classifySentence(sentence), status: 0, message: '' },
          contentType: JSON_UTF8,
          log: { code: 0 },
        };
      }
      case 'keyword': {
        const doc = body.document;
        if (!present(doc)) throw new Invalid('document : must not be null');
        if (Array.isArray(doc)) {
          if (doc.length === 0) throw new Invalid('document : empty list is not acceptable');
          if (doc.some((d) => typeof d !== 'string')) throw new Invalid('document : invalid type(array)');
        } else if (typeof doc !== 'string') throw new Invalid(`document : invalid type(${typeof doc})`);
        else if (doc === '') throw new Invalid('document : must not be empty');
        checkType(body);
        const doSegment = optionalBoolean(body, 'do_segment');
        const max = optionalInt(body, 'max_keyword_num', 1, 1000) ?? DEFAULT_MAX_KEYWORDS;
        checkDicType(body, account);
        const result = extractKeywords(doc as string | string[], doSegment, max);
        return {
          status: 200,
          json: { result, status: 0, message: '' },
          contentType: JSON_UTF8,
          log: { code: 0 },
        };
      }
      case 'ne': {
        const sentence = requireString(body, 'sentence');
        checkType(body);
        checkDicType(body, account);
        // As recorded: message "" and a charset in the content type.
        return {
          status: 200,
          json: { result: extractNamedEntities(sentence), status: 0, message: '' },
          contentType: JSON_UTF8,
          log: { code: 0 },
        };
      }
      case 'summary':
        return summaryCall(body, version);
    }
    return envelopeError(404, 99993, 'Invalid version');
  } catch (err) {
    if (!(err instanceof Invalid)) throw err;
    return isSummary
      ? {
          status: 400,
          json: { result: '', status: 17001, message: err.message },
          contentType: JSON_UTF8,
          log: { code: 17001 },
        }
      : envelopeError(400, 400, err.message);
  }
}

function summaryCall(body: Body, version: string): Answer {
  const document = requireString(body, 'document');
  const [dMin, dMax] = SUMMARY_LIMITS.document;
  const chars = [...document].length;
  if (chars < dMin || chars > dMax) throw new Invalid(`document : size must be between ${dMin} and ${dMax}`);
  // The recorded call went to /nlp/beta/summary without `mode` or `lang`: the beta path defaults them.
  const modeRaw = present(body.mode) ? body.mode : version === 'beta' ? 'extract' : undefined;
  if (modeRaw === undefined) throw new Invalid('mode : must not be null');
  if (modeRaw !== 'extract' && modeRaw !== 'extract-cc')
    throw new Invalid(`mode : ${String(modeRaw)} is invalid`);
  const sentLen = optionalInt(body, 'sent_len', ...SUMMARY_LIMITS.sentLen);
  const charLen = optionalInt(body, 'char_len', ...SUMMARY_LIMITS.charLen);
  // "Conditional" (not shown): exactly one of the two, as the pipeline's client sends it.
  if ((sentLen === undefined) === (charLen === undefined))
    throw new Invalid('sent_len : exactly one of sent_len and char_len is required');
  if (modeRaw === 'extract') {
    const lang = present(body.lang) ? body.lang : version === 'beta' ? 'ja' : undefined;
    if (lang === undefined) throw new Invalid('lang : must not be null');
    if (lang !== 'ja' && lang !== 'en') throw new Invalid(`lang : ${String(lang)} is invalid`);
  }
  const result = summarize(document, modeRaw, { sentLen, charLen });
  const json = modeRaw === 'extract-cc' ? { result, status: 0, message: 'ok' } : { result, status: 0 };
  return { status: 200, json, contentType: JSON_UTF8, log: { code: 0 } };
}
