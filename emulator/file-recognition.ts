/**
 * Recognition from file (spec 02): one multipart request of exactly three parts, `parameter` (the start
 * message), `audio` and `command` (`{msg:{msgname:"stop"}}`), at most 60 s of audio; the answer is the
 * array of messages in order: `started`, per utterance `speechStartDetected`, `speechEndDetected` and
 * the `recognized` messages, then `completed` with cause `STOP`.
 *
 * Not shown, chosen: errors use the stream form (HTTP status = code, array ending in `completed` with
 * `errorinfo`), not the `{fault:{...}}` form the spec says the service "may" answer; a missing or
 * misnamed part is `410 msg.msgname is invalid`, empty audio is `413 Invalid Data`.
 */
import type { Account } from './accounts.ts';
import type { Answer } from './answer.ts';
import { asrErrors, errorBody, type AsrError } from './asr-errors.ts';
import { mediaTypeParam, tryParseJson } from './http.ts';
import { parseMultipart } from '../schemas/multipart.ts';
import { Recognizer, type ServerMessage } from './recognizer.ts';
import { validateStart } from './start-params.ts';
import { withVocabulary, type VocabularyEntry } from './vocabulary.ts';
import { newUniqueId } from './stream-session.ts';

/** Spec 02, Limits: file recognition audio length. */
const MAX_FILE_SECONDS = 60;

export function recognizeFile(
  account: Account,
  model: string,
  contentType: string | undefined,
  body: Buffer,
  phrasebook: Map<number, string>,
  userWords: (domainId: string) => VocabularyEntry[] = () => [],
): Answer {
  const uniqueId = newUniqueId();
  const error = (e: AsrError): Answer => ({
    status: e.code,
    json: errorBody(uniqueId, e),
    contentType: 'application/json; charset=UTF-8',
    log: { code: e.code },
  });
  const boundary = mediaTypeParam(contentType, 'boundary');
  const parts = boundary ? parseMultipart(body, boundary) : undefined;
  if (
    !parts ||
    parts.length !== 3 ||
    parts[0]!.name !== 'parameter' ||
    parts[1]!.name !== 'audio' ||
    parts[2]!.name !== 'command'
  ) {
    return error(asrErrors.invalidParameter('msg.msgname is invalid'));
  }
  const parameter = tryParseJson(parts[0]!.data);
  const v = validateStart(model, parameter.ok ? parameter.value : undefined);
  if (!v.ok) return error(v.error);
  if (v.params.enableProgress) {
    return error(
      asrErrors.invalidParameter(
        'recognizeParameter.enableProgress must be false for file speech recognition',
      ),
    );
  }
  if (!account.domainIds.includes(v.params.domainId)) return error(asrErrors.noResource());
  const command = tryParseJson(parts[2]!.data);
  const msgname = command.ok
    ? (command.value as { msg?: { msgname?: unknown } } | null)?.msg?.msgname
    : undefined;
  if (msgname !== 'stop') return error(asrErrors.invalidParameter('msg.msgname is invalid'));
  const audio = parts[1]!.data;
  const bps = v.params.codec === 'pcm' ? 2 : 1;
  const seconds = audio.length / bps / v.params.samplingRate;
  if (audio.length < bps) return error(asrErrors.invalidData());
  if (seconds > MAX_FILE_SECONDS) return error(asrErrors.maxVoiceLength());

  const vocabulary = [...v.params.words, ...userWords(v.params.domainId)];
  const recognizer = new Recognizer(uniqueId, v.params, withVocabulary(phrasebook, vocabulary));
  const messages: ServerMessage[] = [
    { msg: { msgname: 'started', uniqueId } },
    ...[...recognizer.push(audio), ...recognizer.flush()].map((m) => m.message),
    { msg: { msgname: 'completed', uniqueId, cause: 'STOP' } },
  ];
  return {
    status: 200,
    json: messages,
    contentType: 'application/json; charset=UTF-8',
    log: {
      session: uniqueId,
      audioSeconds: seconds,
      bytes: audio.length,
      messages: messages.map((m) => m.msg.msgname),
    },
  };
}
