/**
 * Recognition from file (spec 02): one multipart request of exactly three parts, `parameter` (the start
 * message), `audio` and `command` (`{msg:{msgname:"stop"}}`), at most 60 s of audio; the answer is the
 * array of messages in order: `started`, per utterance `speechStartDetected`, `speechEndDetected` and
 * the `recognized` messages, then `completed` with cause `STOP`.
 *
 * The body is read by the emulator's own reader (multipart-body.ts), never the client's. A request takes
 * time: it answers after `rtf × audio seconds ÷ speed` (`--file-rtf`), and while it is recognized it
 * holds one of the account's concurrent sessions (spec 02: `550 No Resource` applies to both ways), so a
 * request beyond the account's sessions is refused with 550. The fault file's recognition errors apply
 * to file requests as to stream audio requests: a rule `afterAudioSeconds: s` fires on a file holding at
 * least s seconds.
 *
 * Not shown, chosen: errors use the stream form (HTTP status = code, array ending in `completed` with
 * `errorinfo`), not the `{fault:{...}}` form the spec says the service "may" answer; a missing or
 * misnamed part is `410 msg.msgname is invalid`, empty audio is `413 Invalid Data`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Account } from './accounts.ts';
import type { Answer } from './answer.ts';
import { asrErrors, errorBody, type AsrError } from './asr-errors.ts';
import type { FaultInjector } from './faults.ts';
import { tryParseJson } from './http.ts';
import { formBoundary, FormError, readForm, type FormPart } from './multipart-body.ts';
import { Recognizer, type ServerMessage } from './recognizer.ts';
import { validateStart, type StartParams } from './start-params.ts';
import type { Stats } from './stats.ts';
import { withVocabulary, type VocabularyEntry } from './vocabulary.ts';
import { newUniqueId } from './stream-session.ts';
import { SERVICE_MAX_FILE_SECONDS } from '../schemas/recognition.ts';

/** Spec 02, Limits: file recognition audio length. */
const MAX_FILE_SECONDS = SERVICE_MAX_FILE_SECONDS;

/** How long a file request takes: `rtf × audio seconds`, divided by the emulator's speed. */
export interface FileTiming {
  rtf: number;
  speed: number;
}

export interface FileRequest {
  account: Account;
  model: string;
  contentType: string | undefined;
  body: Buffer;
  phrasebook: Map<number, string>;
  userWords?: (domainId: string) => VocabularyEntry[];
  timing?: FileTiming;
  faults?: FaultInjector;
  stats?: Stats;
}

const JSON_UTF8 = 'application/json; charset=UTF-8';

function errorAnswer(uniqueId: string, e: AsrError): Answer {
  return {
    status: e.code,
    json: errorBody(uniqueId, e),
    contentType: JSON_UTF8,
    log: { code: e.code, file: true },
  };
}

/** The three parts in the spec's order, or undefined. */
function threeParts(contentType: string | undefined, body: Buffer): FormPart[] | undefined {
  const boundary = formBoundary(contentType);
  if (!boundary) return undefined;
  try {
    const parts = readForm(body, boundary);
    const names = parts.map((p) => p.name).join(',');
    return names === 'parameter,audio,command' ? parts : undefined;
  } catch (err) {
    if (err instanceof FormError) return undefined;
    throw err;
  }
}

/** The request checked as spec 02 says: its parameters, its command and its audio; or the error. */
function checkRequest(
  req: FileRequest,
): { ok: true; params: StartParams; audio: Buffer; seconds: number } | { ok: false; error: AsrError } {
  const parts = threeParts(req.contentType, req.body);
  if (!parts) return { ok: false, error: asrErrors.invalidParameter('msg.msgname is invalid') };
  const [parameterPart, audioPart, commandPart] = parts as [FormPart, FormPart, FormPart];
  const parameter = tryParseJson(parameterPart.content);
  const v = validateStart(req.model, parameter.ok ? parameter.value : undefined);
  if (!v.ok) return v;
  if (v.params.enableProgress) {
    return {
      ok: false,
      error: asrErrors.invalidParameter(
        'recognizeParameter.enableProgress must be false for file speech recognition',
      ),
    };
  }
  if (!req.account.domainIds.includes(v.params.domainId)) return { ok: false, error: asrErrors.noResource() };
  const command = tryParseJson(commandPart.content);
  const msgname = command.ok
    ? (command.value as { msg?: { msgname?: unknown } } | null)?.msg?.msgname
    : undefined;
  if (msgname !== 'stop') return { ok: false, error: asrErrors.invalidParameter('msg.msgname is invalid') };
  const audio = audioPart.content;
  const bps = v.params.codec === 'pcm' ? 2 : 1;
  const seconds = audio.length / bps / v.params.samplingRate;
  if (audio.length < bps) return { ok: false, error: asrErrors.invalidData() };
  if (seconds > MAX_FILE_SECONDS) return { ok: false, error: asrErrors.maxVoiceLength() };
  return { ok: true, params: v.params, audio, seconds };
}

export async function recognizeFile(req: FileRequest): Promise<Answer> {
  const uniqueId = newUniqueId();
  const checked = checkRequest(req);
  if (!checked.ok) return errorAnswer(uniqueId, checked.error);
  const { account } = req;
  if (account.activeSessions >= account.concurrentSessions)
    return errorAnswer(uniqueId, asrErrors.noResource());
  const injected = req.faults?.streamError(checked.seconds);
  if (injected) return errorAnswer(uniqueId, injected);
  account.sessionOpened();
  try {
    const vocabulary = [...checked.params.words, ...(req.userWords?.(checked.params.domainId) ?? [])];
    const recognizer = new Recognizer(uniqueId, checked.params, withVocabulary(req.phrasebook, vocabulary));
    const messages: ServerMessage[] = [
      { msg: { msgname: 'started', uniqueId } },
      ...[...recognizer.push(checked.audio), ...recognizer.flush()].map((m) => m.message),
      { msg: { msgname: 'completed', uniqueId, cause: 'STOP' } },
    ];
    const { rtf, speed } = req.timing ?? { rtf: 0, speed: 1 };
    const ms = (rtf * checked.seconds * 1000) / speed;
    if (ms > 0) await sleep(ms);
    if (req.stats) req.stats.fileAudioSeconds += checked.seconds;
    return {
      status: 200,
      json: messages,
      contentType: JSON_UTF8,
      log: {
        session: uniqueId,
        file: true,
        audioSeconds: checked.seconds,
        bytes: checked.audio.length,
        messages: messages.map((m) => m.msg.msgname),
      },
    };
  } finally {
    account.activeSessions -= 1;
  }
}
