/**
 * The user dictionary operations of spec 02 (Japanese models): `upload` (multipart, one part
 * `cascadeword` of dictionary lines), `clear`, `isset` and `download`, each with `?domainid=`. Answers are
 * multipart with a `status` part of three text lines, code, message and detail (`200`, `OK`, `success`;
 * the spec gives the lines, not their layout; a part carries no header but its Content-Disposition), beside the `cascadeword` part of an upload (each entry
 * echoed as notation, reading, `M`, weight) or a download (notation, reading, weight); a successful
 * `isset` is JSON `{isSet}`. Errors are 410 Invalid Parameter with the spec's details, HTTP 400.
 */
import { randomBytes } from 'node:crypto';
import type { Account } from './accounts.ts';
import type { Answer } from './answer.ts';
import { MODELS } from './models.ts';
import { buildMultipart, boundaryOf, parseMultipart } from '../schemas/multipart.ts';
import { MAX_USER_DICTIONARY_LINES, validateWords } from './start-params.ts';
import { dictionaryKey, type UserDictionaries, type VocabularyEntry } from './vocabulary.ts';

export const SPEECH_WORDS_PATH =
  /^\/api(?:\/dev)?\/asr\/([^/]+)\/speech_words\/([^/]+)\/(upload|clear|isset|download)\/?$/;

function multipart(status: number, code: number, message: string, detail: string, lines?: string): Answer {
  const { body, contentType } = buildMultipart(
    [
      // A part is its Content-Disposition and its text (spec 02: the part holds the lines); a part
      // header more would be read by the service's clients as part of the text.
      { name: 'status', data: `${code}\n${message}\n${detail}\n` },
      ...(lines !== undefined ? [{ name: 'cascadeword', data: lines }] : []),
    ],
    `emu${randomBytes(8).toString('hex')}`,
  );
  return { status, text: body.toString('utf8'), contentType, log: { code } };
}

const invalid = (detail: string) => multipart(400, 410, 'Invalid Parameter', detail);

/** Dictionary lines → entries for validation (a line with fewer than two fields has no surface or reading). */
function linesOf(text: string): Record<string, unknown>[] {
  return text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [surface, reading, prob] = l.split('\t');
      return { surface, reading, ...(prob !== undefined && prob !== '' ? { prob } : {}) };
    });
}

export function handleSpeechWords(
  dictionaries: UserDictionaries,
  account: Account,
  model: string,
  operation: string,
  domainId: string | null,
  contentType: string | undefined,
  body: Buffer,
): Answer {
  // Japanese models only (spec 02, "What the service does").
  if (!MODELS[model] || !model.startsWith('ja-')) return invalid('Invalid Model Name');
  if (!domainId || !account.domainIds.includes(domainId)) return invalid('Invalid domainid');
  const key = dictionaryKey(account.clientId, model, domainId);
  switch (operation) {
    case 'upload': {
      const boundary = boundaryOf(contentType);
      const part = boundary
        ? parseMultipart(body, boundary)?.find((p) => p.name === 'cascadeword')
        : undefined;
      if (!part) return invalid('Upload Error');
      const checked = validateWords(linesOf(part.data.toString('utf8')), MAX_USER_DICTIONARY_LINES);
      if (!checked.ok) return invalid(checked.error.detail);
      if (checked.words.length === 0) return invalid('Invalid Parameter -> List is null');
      const entries: VocabularyEntry[] = checked.words;
      dictionaries.upload(key, entries);
      return multipart(
        200,
        200,
        'OK',
        'success',
        entries.map((e) => `${e.surface}\t${e.reading}\tM\t${e.prob}\n`).join(''),
      );
    }
    case 'clear':
      dictionaries.clear(key);
      return multipart(200, 200, 'OK', 'success');
    case 'isset':
      return {
        status: 200,
        json: { isSet: dictionaries.isSet(key) },
        contentType: 'application/json',
        log: { code: 200 },
      };
    default:
      return multipart(
        200,
        200,
        'OK',
        'success',
        dictionaries
          .download(key)
          .map((e) => `${e.surface}\t${e.reading}\t${e.prob}\n`)
          .join(''),
      );
  }
}
