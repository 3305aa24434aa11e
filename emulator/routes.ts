/**
 * The emulator's routes: which handler answers a request (by path and method), and the handlers of the
 * token endpoint, text analysis, speech recognition, user dictionaries and the emulator's own controls.
 */
import type { IncomingMessage } from 'node:http';
import type { EmulatorFaultsInput } from '../schemas/emulator-faults.ts';
import type { Account } from './accounts.ts';
import type { Answer } from './answer.ts';
import type { EmulatorState } from './emulator-state.ts';
import type { Family } from './faults.ts';
import { recognizeFile } from './file-recognition.ts';
import { mediaType, parseCookies, readBody, tryParseJson } from './http.ts';
import { envelopeError, handleNlp, JSON_UTF8, NLP_ENDPOINTS, NLP_NOT_EMULATED } from './nlp/routes.ts';
import { handleSpeechWords, SPEECH_WORDS_PATH } from './speech-words.ts';
import type { LogEntry } from './stats.ts';
import { gatewayErrorBody } from './tokens.ts';

const CLASSIFIER_PATH = /^\/api(?:\/dev)?\/nlp\/([^/]+)\/classifier\/models(?:\/([^/]+?)(\/classify)?)?\/?$/;
const NLP_PATH = /^\/api(?:\/dev)?\/nlp\/([^/]+)\/(.+?)\/?$/;
const ASR_PATH = /^\/api(?:\/dev)?\/asr\/([^/]+)\/speech_recognition\/([^/]+)\/?$/;
const NOT_FOUND = { result: {}, message: 'Not Found', status: 404 };

/** A request's handler, and the family its faults and counters belong to (`admin`: neither). */
export interface Route {
  family: Family | 'admin';
  run: () => Promise<Answer>;
}

function withLog(answer: Answer, extra: Partial<LogEntry>): Answer {
  return { ...answer, log: { ...extra, ...answer.log } };
}

async function tokenRoute(emu: EmulatorState, req: IncomingMessage): Promise<Answer> {
  const parsed = tryParseJson(await readBody(req));
  const body = (parsed.ok ? parsed.value : undefined) as Record<string, unknown> | undefined;
  const account =
    body?.grantType === 'client_credentials'
      ? emu.accounts.authenticate(body.clientId, body.clientSecret)
      : undefined;
  if (!account) return { status: 401, json: gatewayErrorBody(401), log: { code: 401 } };
  emu.stats.tokensIssued++;
  return { status: 201, json: emu.tokens.issue(account, emu.wallNow()), log: { account: account.clientId } };
}

/** The refusal of an NLP request before its body is read: rate, endpoint, version, usage; or none. */
function nlpRefusal(emu: EmulatorState, account: Account, version: string, name: string): Answer | undefined {
  if (emu.faults.rateBurst(emu.wallNow()) || !account.takeRateToken(emu.wallNow()))
    return envelopeError(429, 99997, 'Too many requests in a very short time; temporarily blocked');
  const versions = NLP_ENDPOINTS[name];
  if (!versions) {
    return NLP_NOT_EMULATED.includes(name)
      ? envelopeError(501, 501, `${name} is not emulated`)
      : envelopeError(404, 99993, 'Invalid version');
  }
  if (!versions.includes(version)) return envelopeError(404, 99993, 'Invalid version');
  if (!account.takeUse(emu.wallNow())) {
    const code = account.usageErrorCode;
    const message = code === 99996 ? 'Usage limit reached within 24 hours' : 'Preset usage limit reached';
    return envelopeError(403, code, message);
  }
  return undefined;
}

/**
 * Text classification (spec 03): Enterprise accounts only, `v1` only; each call is a use and takes a
 * rate token like any text call. Which operation by method and path.
 */
async function classifierRoute(
  emu: EmulatorState,
  req: IncomingMessage,
  match: RegExpExecArray,
  method: string,
): Promise<Answer> {
  const account = emu.authenticate(req);
  if (!account) return envelopeError(401, 99998, 'Authentication Error');
  const who = { account: account.clientId };
  const [, version, id, classify] = match;
  if (account.kind === 'Developers')
    return withLog(
      envelopeError(403, 403, 'text classification is not available to Developers accounts'),
      who,
    );
  const refusal = nlpRefusal(emu, account, version!, 'classifier');
  if (refusal) return withLog(refusal, who);
  const models = emu.classifiers;
  const body = await readBody(req);
  let answer: Answer;
  if (id === undefined && method === 'POST')
    answer = models.learn(account, req.headers['content-type'], body);
  else if (id === undefined && method === 'GET') answer = models.list(account);
  else if (id !== undefined && classify && method === 'POST') {
    const parsed = tryParseJson(body);
    answer = parsed.ok
      ? models.classify(account, id, parsed.value)
      : envelopeError(400, 6103, 'Invalid JSON format');
  } else if (id !== undefined && !classify && method === 'GET') answer = models.status(account, id);
  else if (id !== undefined && !classify && method === 'DELETE') answer = models.delete(account, id);
  else answer = envelopeError(404, 404, 'specified URL not exist');
  return withLog(answer, who);
}

async function nlpRoute(
  emu: EmulatorState,
  req: IncomingMessage,
  version: string,
  name: string,
): Promise<Answer> {
  const account = emu.authenticate(req);
  if (!account) return envelopeError(401, 99998, 'Authentication Error');
  const who = { account: account.clientId };
  const refusal = nlpRefusal(emu, account, version, name);
  if (refusal) return withLog(refusal, who);
  const parsed = tryParseJson(await readBody(req));
  if (!parsed.ok) {
    // Spec 03: summarization answers 17001 for a body that is not JSON.
    if (name === 'summary') {
      return withLog(
        {
          status: 400,
          json: { result: '', status: 17001, message: 'request data is not JSON' },
          contentType: JSON_UTF8,
          log: { code: 17001 },
        },
        who,
      );
    }
    return withLog(envelopeError(400, 6103, 'Invalid JSON format'), who);
  }
  return withLog(handleNlp(name, version, parsed.value, account), who);
}

/**
 * What every speech endpoint checks first: a token (spec 03: HTTP 401 to a bad one, the gateway's body as
 * recorded), an account allowed speech (Developers: 403), version v1. The account, or the refusal.
 */
function speechGate(
  emu: EmulatorState,
  req: IncomingMessage,
  version: string,
): Answer | { account: Account; who: { account: string } } {
  const account = emu.authenticate(req);
  if (!account) return { status: 401, json: gatewayErrorBody(401), log: { code: 401 } };
  const who = { account: account.clientId };
  if (account.kind === 'Developers')
    return { status: 403, json: gatewayErrorBody(403), log: { ...who, code: 403 } };
  if (version !== 'v1') return { status: 404, json: NOT_FOUND, log: { ...who, code: 404 } };
  return { account, who };
}

/** A JSON request of a stream session: start, stop, cancel, or (any other msgname) an invalid one. */
async function streamJsonRequest(
  emu: EmulatorState,
  account: Account,
  model: string,
  body: Buffer,
  uniqueId: string | undefined,
  cookies: ReturnType<typeof parseCookies>,
): Promise<Answer> {
  const parsed = tryParseJson(body);
  const msgname = parsed.ok
    ? (parsed.value as { msg?: { msgname?: unknown } } | null)?.msg?.msgname
    : undefined;
  if (msgname === 'stop' || msgname === 'cancel') {
    return emu.sessions.request(msgname, uniqueId, cookies, body, model);
  }
  if (msgname === 'start' || !uniqueId)
    return emu.sessions.start(account, model, parsed.ok ? parsed.value : undefined);
  // An unknown msgname on a session: the session ends with 410 (any error ends it).
  return emu.sessions.request('invalid', uniqueId, cookies, body, model);
}

async function asrRoute(
  emu: EmulatorState,
  req: IncomingMessage,
  version: string,
  model: string,
): Promise<Answer> {
  const gate = speechGate(emu, req, version);
  if ('status' in gate) return gate;
  const { account, who } = gate;
  const contentType = req.headers['content-type'];
  const type = mediaType(contentType);
  const body = await readBody(req);
  if (type === 'multipart/form-data') {
    emu.stats.fileRecognitions++;
    return withLog(
      await recognizeFile({
        account,
        model,
        contentType,
        body,
        phrasebook: emu.phrasebook,
        userWords: (domainId) => emu.userWords(account, model, domainId),
        timing: emu.fileTiming,
        faults: emu.faults,
        stats: emu.stats,
      }),
      who,
    );
  }
  const header = req.headers['unique-id'];
  const uniqueId = Array.isArray(header) ? header[0] : header;
  const cookies = parseCookies(req.headers.cookie);
  if (type === 'application/json')
    return withLog(await streamJsonRequest(emu, account, model, body, uniqueId, cookies), who);
  return withLog(await emu.sessions.request('audio', uniqueId, cookies, body, model), who);
}

async function speechWordsRoute(
  emu: EmulatorState,
  req: IncomingMessage,
  version: string,
  model: string,
  operation: string,
): Promise<Answer> {
  const gate = speechGate(emu, req, version);
  if ('status' in gate) return gate;
  const { account, who } = gate;
  const domainId = new URL(req.url ?? '/', 'http://emulator').searchParams.get('domainid');
  const body = await readBody(req);
  return withLog(
    handleSpeechWords(
      emu.dictionaries,
      account,
      model,
      operation,
      domainId,
      req.headers['content-type'],
      body,
    ),
    who,
  );
}

async function setFaultsRoute(emu: EmulatorState, req: IncomingMessage): Promise<Answer> {
  const parsed = tryParseJson(await readBody(req));
  try {
    emu.setFaults((parsed.ok ? parsed.value : undefined) as EmulatorFaultsInput);
    return { status: 204 };
  } catch (err) {
    return { status: 400, json: { message: (err as Error).message } };
  }
}

/** The emulator's own endpoints: its counters, their reset, and fault injection. */
function adminRoute(emu: EmulatorState, req: IncomingMessage, path: string, method: string): Route {
  if (path === '/emulator/stats' && method === 'GET')
    return { family: 'admin', run: async () => ({ status: 200, json: emu.snapshot() }) };
  if (path === '/emulator/stats/reset' && method === 'POST') {
    return { family: 'admin', run: async () => (emu.resetStats(), { status: 204 }) };
  }
  if (path === '/emulator/faults' && method === 'POST')
    return { family: 'admin', run: () => setFaultsRoute(emu, req) };
  return { family: 'admin', run: async () => ({ status: 404, json: NOT_FOUND }) };
}

export async function routeOf(emu: EmulatorState, req: IncomingMessage, path: string): Promise<Route> {
  const method = req.method ?? 'GET';
  if (path === '/v1/oauth/accesstokens' && method === 'POST')
    return { family: 'token', run: () => tokenRoute(emu, req) };
  const classifier = CLASSIFIER_PATH.exec(path);
  if (classifier) return { family: 'nlp', run: () => classifierRoute(emu, req, classifier, method) };
  const nlp = NLP_PATH.exec(path);
  if (nlp && method === 'POST') return { family: 'nlp', run: () => nlpRoute(emu, req, nlp[1]!, nlp[2]!) };
  const words = SPEECH_WORDS_PATH.exec(path);
  if (words && (method === 'GET' || method === 'POST'))
    return { family: 'asr', run: () => speechWordsRoute(emu, req, words[1]!, words[2]!, words[3]!) };
  const asr = ASR_PATH.exec(path);
  if (asr && method === 'POST') return { family: 'asr', run: () => asrRoute(emu, req, asr[1]!, asr[2]!) };
  return adminRoute(emu, req, path, method);
}
