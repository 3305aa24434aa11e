/**
 * The Language Analysis Service emulator: one node:http server answering the token endpoint, text
 * analysis and speech recognition at the addresses real clients use:
 *
 *   POST /v1/oauth/accesstokens                                   token (spec 01, Authentication)
 *   POST /api/dev/nlp/<version>/<endpoint>, /api/nlp/...          text analysis (spec 01, 03)
 *   POST /api/asr/v1/speech_recognition/<model>, /api/dev/asr/... file and stream recognition (spec 02)
 *   POST|GET /api/asr/v1/speech_words/<model>/<upload|clear|isset|download>   user dictionary (spec 02)
 *   GET  /emulator/stats, POST /emulator/stats/reset, POST /emulator/faults   evidence and control
 *
 * so `${url}/api/dev` serves as the one base URL of both families. Plain HTTP on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmulatorAccountInput } from '../schemas/emulator-accounts.ts';
import type { EmulatorFaultsInput } from '../schemas/emulator-faults.ts';
import { phrasebookSchema, type Phrasebook } from '../schemas/synthetic-recording.ts';
import { Account, AccountStore, defaultAccountInput, readAccountsFile } from './accounts.ts';
import type { Answer } from './answer.ts';
import type { Clock } from './clock.ts';
import { recognizeFile } from './file-recognition.ts';
import { FaultInjector, readFaultsFile, type Family } from './faults.ts';
import {
  BodyTooLargeError,
  bearerToken,
  mediaType,
  parseCookies,
  readBody,
  sendEmpty,
  sendJson,
  sendText,
  tryParseJson,
} from './http.ts';
import { handleSpeechWords, SPEECH_WORDS_PATH } from './speech-words.ts';
import { dictionaryKey, UserDictionaries } from './vocabulary.ts';
import { envelopeError, handleNlp, JSON_UTF8, NLP_ENDPOINTS, NLP_NOT_EMULATED } from './nlp/routes.ts';
import { DEFAULT_PHRASEBOOK_PATH, loadPhrasebook, phrasebookMap } from './phrasebook.ts';
import { RequestLog, Stats, type LogEntry } from './stats.ts';
import {
  DEFAULT_BUFFER_SECONDS,
  DEFAULT_IDLE_SECONDS,
  DEFAULT_LB_COOKIE,
  DEFAULT_DEADLINE_SLACK_MS,
  DEFAULT_PACING_SLACK_MS,
  SessionRegistry,
  type PacingSnapshot,
} from './stream-session.ts';
import { DEFAULT_TOKEN_LIFETIME_SECONDS, gatewayErrorBody, TokenStore } from './tokens.ts';

export interface EmulatorOptions {
  /** TCP port; 0 (default) = any free port. */
  port?: number;
  /** Address to listen on; default 127.0.0.1. */
  host?: string;
  /** Time scale: every stream time rule (pacing, 1-s deadlines, idle timeout) is divided by it. Default 1. */
  speed?: number;
  /** `on` (default): audio further ahead of the recognizer than `bufferSeconds` is 412. `off`: no pacing. */
  pacing?: 'on' | 'off';
  /**
   * The fastest pacing accepted, × real time: the recognizer works through the audio it has at this rate.
   * Default `speed`. Above `speed` it stands for a service that recognizes faster than real time while its
   * deadlines stay those of `speed` (the target of `CALLPIPE_SERVICE_SPEED=auto`).
   */
  ceiling?: number;
  /** Seconds of audio the recognizer buffers ahead of its real-time clock. Default 2. */
  bufferSeconds?: number;
  /** Refuse audio requests that are not 240 ms (413); otherwise they are accepted and counted. */
  strictChunks?: boolean;
  /** Wall-clock tolerance of the 1-s deadlines and the idle timeout, in ms. Default 250; 0 for exact. */
  deadlineSlackMs?: number;
  /** Wall-clock tolerance of pacing, in ms (× speed = seconds of audio). Default 50; 0 for exact. */
  pacingSlackMs?: number;
  /** Sets both tolerances at once (the two options above win). */
  slackMs?: number;
  /** Seconds (÷ speed) without a request after which a stream session ends with 651. Default 10. */
  idleSeconds?: number;
  /** Name of the load-balancer cookie of stream sessions (not shown in the spec). */
  lbCookieName?: string;
  /** Phrasebook file (id → text); default the shipped Japanese call-center phrasebook. */
  phrasebookPath?: string;
  /** A phrasebook given directly (wins over `phrasebookPath`). */
  phrasebook?: Phrasebook;
  /** Fault injection: the object, or the path of a JSON file. */
  faults?: EmulatorFaultsInput | string;
  /** Accounts file (JSON); default: one Enterprise account with the local credentials. */
  accountsPath?: string;
  /** Accounts given directly (win over `accountsPath`). */
  accounts?: EmulatorAccountInput[];
  /** Concurrent sessions of the default account (default 64). */
  concurrentSessions?: number;
  /** Access-token lifetime in seconds (default 24 h, spec 01). */
  tokenLifetimeSeconds?: number;
  /** JSON-lines request log (appended). */
  requestLogPath?: string;
  /** Seed of fault injection (a faults file's own `seed` wins). */
  seed?: number;
  /**
   * The clock of every time rule, in milliseconds (emulator/clock.ts); default the system's. Tests give
   * a `ManualClock` to check time rules exactly, whatever the machine's speed.
   */
  clock?: Clock;
}

/** The counters of `/emulator/stats`. */
export type EmulatorStats = ReturnType<Stats['snapshot']> & {
  activeSessions: number;
  faultsInjected: Record<string, number>;
  /** Per account: sessions open now, and the most open at once since start or the last reset. */
  accounts: { clientId: string; kind: string; activeSessions: number; peakSessions: number }[];
};

export interface RunningEmulator {
  port: number;
  /** http://127.0.0.1:PORT */
  url: string;
  /** `${url}/api/dev`: base of both `/nlp/v1/...` and `/asr/v1/...`. */
  baseUrl: string;
  /** `${url}/v1/oauth/accesstokens` */
  authUrl: string;
  clientId: string;
  clientSecret: string;
  domainId: string;
  stats(): EmulatorStats;
  /** How far ahead of its recognizer a live stream session is, by the emulator's own accounting. */
  pacing(uniqueId: string): PacingSnapshot | undefined;
  resetStats(): void;
  setFaults(faults: EmulatorFaultsInput): void;
  close(): Promise<void>;
}

const NLP_PATH = /^\/api(?:\/dev)?\/nlp\/([^/]+)\/(.+?)\/?$/;
const ASR_PATH = /^\/api(?:\/dev)?\/asr\/([^/]+)\/speech_recognition\/([^/]+)\/?$/;
const NOT_FOUND = { result: {}, message: 'Not Found', status: 404 };

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const speed = options.speed ?? 1;
  if (!(speed > 0)) throw new Error(`speed must be positive, got ${speed}`);
  const ceiling = options.ceiling ?? speed;
  if (!(ceiling > 0) || !Number.isFinite(ceiling))
    throw new Error(`ceiling must be positive, got ${ceiling}`);
  const accountInputs =
    options.accounts ??
    (options.accountsPath
      ? readAccountsFile(options.accountsPath)
      : [
          defaultAccountInput(
            options.concurrentSessions ? { concurrentSessions: options.concurrentSessions } : {},
          ),
        ]);
  // Only differences of these readings matter, except a token's `issued_at`: epoch milliseconds.
  const wallNow = options.clock ?? Date.now;
  const accounts = new AccountStore(accountInputs, wallNow);
  const primary = accounts.all()[0]!;
  const phrasebook = options.phrasebook
    ? phrasebookMap(phrasebookSchema.parse(options.phrasebook))
    : loadPhrasebook(options.phrasebookPath ?? DEFAULT_PHRASEBOOK_PATH);
  const startedAt = wallNow();
  const faultsInput =
    typeof options.faults === 'string' ? readFaultsFile(options.faults) : (options.faults ?? {});
  let faults = new FaultInjector(faultsInput, options.seed ?? 1, startedAt);
  const tokens = new TokenStore(
    options.tokenLifetimeSeconds ?? DEFAULT_TOKEN_LIFETIME_SECONDS,
    faults.earlyTokenExpirySeconds,
  );
  const dictionaries = new UserDictionaries(wallNow, speed);
  const userWords = (account: Account, model: string, domainId: string) =>
    dictionaries.active(dictionaryKey(account.clientId, model, domainId));
  const stats = new Stats();
  const log = new RequestLog(options.requestLogPath);
  const sessions = new SessionRegistry({
    timing: {
      speed,
      ceiling,
      pacing: (options.pacing ?? 'on') === 'on',
      bufferSeconds: options.bufferSeconds ?? DEFAULT_BUFFER_SECONDS,
      deadlineSlackMs: options.deadlineSlackMs ?? options.slackMs ?? DEFAULT_DEADLINE_SLACK_MS,
      pacingSlackMs: options.pacingSlackMs ?? options.slackMs ?? DEFAULT_PACING_SLACK_MS,
      strictChunks: options.strictChunks ?? false,
      idleSeconds: options.idleSeconds ?? DEFAULT_IDLE_SECONDS,
      lbCookieName: options.lbCookieName ?? DEFAULT_LB_COOKIE,
    },
    phrasebook: () => phrasebook,
    userWords,
    faults: () => faults,
    stats,
    lbValue: `emu-${randomBytes(4).toString('hex')}`,
    ...(options.clock ? { clock: options.clock } : {}),
  });

  /** Counters from zero; an account's peak from the sessions open now. */
  function resetStats(): void {
    stats.reset();
    for (const a of accounts.all()) a.peakSessions = a.activeSessions;
  }

  function snapshot(): EmulatorStats {
    return stats.snapshot({
      activeSessions: sessions.activeCount,
      faultsInjected: faults.counts,
      accounts: accounts.all().map((a) => ({
        clientId: a.clientId,
        kind: a.kind,
        activeSessions: a.activeSessions,
        peakSessions: a.peakSessions,
      })),
    });
  }

  /** The account of the request's bearer token, honouring injected token expiry. */
  function authenticate(req: IncomingMessage): Account | undefined {
    const token = bearerToken(req);
    const account = tokens.verify(token, wallNow());
    if (account && token && faults.revokeToken()) {
      tokens.revoke(token);
      return undefined;
    }
    return account;
  }

  async function tokenRoute(req: IncomingMessage): Promise<Answer> {
    const parsed = tryParseJson(await readBody(req));
    const body = (parsed.ok ? parsed.value : undefined) as Record<string, unknown> | undefined;
    const account =
      body?.grantType === 'client_credentials'
        ? accounts.authenticate(body.clientId, body.clientSecret)
        : undefined;
    if (!account) return { status: 401, json: gatewayErrorBody(401), log: { code: 401 } };
    stats.tokensIssued++;
    return { status: 201, json: tokens.issue(account, wallNow()), log: { account: account.clientId } };
  }

  async function nlpRoute(req: IncomingMessage, version: string, name: string): Promise<Answer> {
    const account = authenticate(req);
    if (!account) return envelopeError(401, 99998, 'Authentication Error');
    const who = { account: account.clientId };
    if (faults.rateBurst(wallNow()) || !account.takeRateToken(wallNow())) {
      return withLog(
        envelopeError(429, 99997, 'Too many requests in a very short time; temporarily blocked'),
        who,
      );
    }
    const versions = NLP_ENDPOINTS[name];
    if (!versions) {
      const known = NLP_NOT_EMULATED.includes(name);
      return withLog(
        known
          ? envelopeError(501, 501, `${name} is not emulated`)
          : envelopeError(404, 99993, 'Invalid version'),
        who,
      );
    }
    if (!versions.includes(version)) return withLog(envelopeError(404, 99993, 'Invalid version'), who);
    if (!account.takeUse(wallNow())) {
      const code = account.usageErrorCode;
      const message = code === 99996 ? 'Usage limit reached within 24 hours' : 'Preset usage limit reached';
      return withLog(envelopeError(403, code, message), who);
    }
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
    req: IncomingMessage,
    version: string,
  ): Answer | { account: NonNullable<ReturnType<typeof authenticate>>; who: { account: string } } {
    const account = authenticate(req);
    if (!account) return { status: 401, json: gatewayErrorBody(401), log: { code: 401 } };
    const who = { account: account.clientId };
    if (account.kind === 'Developers')
      return { status: 403, json: gatewayErrorBody(403), log: { ...who, code: 403 } };
    if (version !== 'v1') return { status: 404, json: NOT_FOUND, log: { ...who, code: 404 } };
    return { account, who };
  }

  async function asrRoute(req: IncomingMessage, version: string, model: string): Promise<Answer> {
    const gate = speechGate(req, version);
    if ('status' in gate) return gate;
    const { account, who } = gate;
    const contentType = req.headers['content-type'];
    const type = mediaType(contentType);
    const body = await readBody(req);
    if (type === 'multipart/form-data') {
      stats.fileRecognitions++;
      return withLog(
        recognizeFile(account, model, contentType, body, phrasebook, (domainId) =>
          userWords(account, model, domainId),
        ),
        who,
      );
    }
    const header = req.headers['unique-id'];
    const uniqueId = Array.isArray(header) ? header[0] : header;
    const cookies = parseCookies(req.headers.cookie);
    if (type === 'application/json') {
      const parsed = tryParseJson(body);
      const msgname = parsed.ok
        ? (parsed.value as { msg?: { msgname?: unknown } } | null)?.msg?.msgname
        : undefined;
      if (msgname === 'stop' || msgname === 'cancel') {
        return withLog(await sessions.request(msgname, uniqueId, cookies, body, model), who);
      }
      if (msgname === 'start' || !uniqueId)
        return withLog(sessions.start(account, model, parsed.ok ? parsed.value : undefined), who);
      // An unknown msgname on a session: the session ends with 410 (any error ends it).
      return withLog(await sessions.request('invalid', uniqueId, cookies, body, model), who);
    }
    return withLog(await sessions.request('audio', uniqueId, cookies, body, model), who);
  }

  async function speechWordsRoute(
    req: IncomingMessage,
    version: string,
    model: string,
    operation: string,
  ): Promise<Answer> {
    const gate = speechGate(req, version);
    if ('status' in gate) return gate;
    const { account, who } = gate;
    const domainId = new URL(req.url ?? '/', 'http://emulator').searchParams.get('domainid');
    const body = await readBody(req);
    return withLog(
      handleSpeechWords(dictionaries, account, model, operation, domainId, req.headers['content-type'], body),
      who,
    );
  }

  function withLog(answer: Answer, extra: Partial<LogEntry>): Answer {
    return { ...answer, log: { ...extra, ...answer.log } };
  }

  async function route(
    req: IncomingMessage,
    path: string,
  ): Promise<{ family: Family | 'admin'; run: () => Promise<Answer> }> {
    const method = req.method ?? 'GET';
    if (path === '/v1/oauth/accesstokens' && method === 'POST')
      return { family: 'token', run: () => tokenRoute(req) };
    const nlp = NLP_PATH.exec(path);
    if (nlp && method === 'POST') return { family: 'nlp', run: () => nlpRoute(req, nlp[1]!, nlp[2]!) };
    const words = SPEECH_WORDS_PATH.exec(path);
    if (words && (method === 'GET' || method === 'POST'))
      return { family: 'asr', run: () => speechWordsRoute(req, words[1]!, words[2]!, words[3]!) };
    const asr = ASR_PATH.exec(path);
    if (asr && method === 'POST') return { family: 'asr', run: () => asrRoute(req, asr[1]!, asr[2]!) };
    if (path === '/emulator/stats' && method === 'GET')
      return { family: 'admin', run: async () => ({ status: 200, json: snapshot() }) };
    if (path === '/emulator/stats/reset' && method === 'POST') {
      return { family: 'admin', run: async () => (resetStats(), { status: 204 }) };
    }
    if (path === '/emulator/faults' && method === 'POST') {
      return {
        family: 'admin',
        run: async () => {
          const parsed = tryParseJson(await readBody(req));
          try {
            setFaults((parsed.ok ? parsed.value : undefined) as EmulatorFaultsInput);
            return { status: 204 };
          } catch (err) {
            return { status: 400, json: { message: (err as Error).message } };
          }
        },
      };
    }
    return { family: 'admin', run: async () => ({ status: 404, json: NOT_FOUND }) };
  }

  function setFaults(input: EmulatorFaultsInput): void {
    faults = new FaultInjector(input, options.seed ?? 1, startedAt);
    tokens.setEarlyExpiry(faults.earlyTokenExpirySeconds);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const began = performance.now();
    const path = (req.url ?? '/').split('?')[0]!;
    const { family, run } = await route(req, path);
    let fault: string | undefined;
    let answer: Answer;
    if (family !== 'admin' && faults.dropConnection(family)) {
      req.socket.destroy();
      record({ status: 0, log: { fault: 'dropConnection' } }, 'dropConnection');
      return;
    }
    const serverError = family !== 'admin' ? faults.serverError(family) : undefined;
    if (serverError) {
      fault = 'serverError';
      answer = { status: serverError.status, text: serverError.body, contentType: 'text/html' };
    } else {
      try {
        answer = await run();
      } catch (err) {
        if (err instanceof BodyTooLargeError)
          answer = { status: 413, json: { result: {}, message: err.message, status: 413 } };
        else {
          answer = { status: 500, json: { result: {}, message: 'emulator error', status: 500 } };
          console.error('emulator:', err);
        }
      }
    }
    const latency = family !== 'admin' ? faults.latencyMs(family) : 0;
    if (latency > 0) {
      fault ??= 'latency';
      await new Promise((r) => setTimeout(r, latency));
    }
    if (res.destroyed) return;
    if (answer.text !== undefined) sendText(res, answer.status, answer.text, answer.contentType);
    else if (answer.json !== undefined)
      sendJson(res, answer.status, answer.json, { contentType: answer.contentType, headers: answer.headers });
    else sendEmpty(res, answer.status, answer.headers);
    answer.onSent?.();
    record(answer, fault);

    function record(a: Pick<Answer, 'status' | 'log'>, f: string | undefined) {
      const entry: LogEntry = {
        time: new Date().toISOString(),
        method: req.method ?? 'GET',
        endpoint: path,
        status: a.status,
        ms: Math.round((performance.now() - began) * 100) / 100,
        ...a.log,
        ...(f ? { fault: f } : {}),
      };
      if (family !== 'admin') {
        stats.record(entry);
        log.write(entry);
      }
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      console.error('emulator:', err);
      if (!res.headersSent) sendJson(res, 500, { result: {}, message: 'emulator error', status: 500 });
    });
  });
  // Clients keep connections alive across a whole session; keep ours open a little longer than theirs.
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host && options.host !== '0.0.0.0' ? options.host : '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    port,
    url,
    baseUrl: `${url}/api/dev`,
    authUrl: `${url}/v1/oauth/accesstokens`,
    clientId: primary.clientId,
    clientSecret: primary.clientSecret,
    domainId: primary.domainIds[0]!,
    stats: snapshot,
    pacing: (uniqueId) => sessions.pacing(uniqueId),
    resetStats,
    setFaults,
    close: async () => {
      sessions.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await log.close();
    },
  };
}
