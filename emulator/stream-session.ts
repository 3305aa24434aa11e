/**
 * Stream recognition sessions: the state machine of spec 02 ("States and transitions").
 *
 *   no session ─start─► ready ─audio─► receiving ─audio─► receiving ─stop─► completed
 *                                                         └─cancel─► cancelled
 *   any ─error─► ended (every later request on the id: 411 Invalid Unique ID)
 *
 * Rules enforced, each with its code (spec 02, Errors; the codes the spec leaves open are chosen in
 * emulator/README.md):
 * - a known unique id, with the load-balancer cookie of the start answer, else 411;
 * - one request at a time: a request while the previous one is unanswered, 412;
 * - the `token` cookie of the last answer (it rotates on every answer), else 450;
 * - the first audio within 1 s of the start answer, stop/cancel within 1 s of the last audio answer,
 *   else 552; no request for `idleSeconds` (10 s), 651;
 * - 240 ms per audio request (others logged, or 413 with strict chunks); at most 3,000 s per session, 413;
 * - pacing: the recognizer keeps up with real time × speed since the first audio, and works through
 *   buffered audio up to `ceiling` × real time (default `speed`); audio further ahead of it than
 *   `bufferSeconds`, 412. So a client paced at `speed` since its start is always accepted (a burst after
 *   a stall included), and one faster than that only while the recognizer's `ceiling` keeps up: time
 *   spent behind earns no credit beyond real time × speed.
 * All time rules are divided by `speed`, and get a wall-clock tolerance (`deadlineSlackMs`, `pacingSlackMs`) so that scheduling
 * noise of a loaded machine is not mistaken for a client's fault.
 */
import { randomBytes } from 'node:crypto';
import { LOCAL_DOMAIN_ID } from '../schemas/config.ts';
import type { Clock } from './clock.ts';
import { SERVICE_MAX_SESSION_SECONDS } from '../schemas/limits.ts';
import type { Account } from './accounts.ts';
import type { Answer } from './answer.ts';
import { asrErrors, errorBody, type AsrError } from './asr-errors.ts';
import { bytesPerSample } from './audio.ts';
import type { FaultInjector } from './faults.ts';
import { Recognizer, type ServerMessage, type TimedMessage } from './recognizer.ts';
import { validateStart, type StartParams } from './start-params.ts';
import { withVocabulary, type VocabularyEntry } from './vocabulary.ts';
import type { Stats } from './stats.ts';

/** Spec 02, Limits. */
const CHUNK_SECONDS = 0.24;
const DEADLINE_SECONDS = 1;
/** Not in the spec: a session that hears nothing for this long (÷ speed) ends with 651. */
export const DEFAULT_IDLE_SECONDS = 10;
export const DEFAULT_BUFFER_SECONDS = 2;
/**
 * Wall-clock tolerance of the 1-s deadlines (÷ speed) and of pacing. At speed 100 a deadline is 10 ms,
 * less than one garbage-collection pause of a client on a loaded 2-core machine; measured: 64 sessions
 * starting at once miss a 60 ms deadline. Pacing needs less (a late chunk never causes 412).
 */
export const DEFAULT_DEADLINE_SLACK_MS = 250;
export const DEFAULT_PACING_SLACK_MS = 50;
export const DEFAULT_LB_COOKIE = 'CPLBROUTE';
/** Ended ids remembered (to answer 411, or the error a sweep found); oldest forgotten first. */
const ENDED_MEMORY = 20_000;

export interface StreamTiming {
  speed: number;
  /** Audio seconds the recognizer works through per wall second: the fastest pacing accepted. */
  ceiling: number;
  pacing: boolean;
  bufferSeconds: number;
  deadlineSlackMs: number;
  pacingSlackMs: number;
  strictChunks: boolean;
  idleSeconds: number;
  lbCookieName: string;
}

export type State = 'ready' | 'receiving' | 'completed' | 'cancelled' | 'failed';

export class StreamSession {
  state: State = 'ready';
  busy = false;
  token = newToken();
  /** The clock's time of the last answer sent, and of the start and last audio answers. */
  lastAnswerAt = 0;
  startAnsweredAt = 0;
  lastAudioAnsweredAt = 0;
  /** The clock's time of the first audio request's arrival. */
  firstAudioAt: number | undefined;
  /** Audio seconds the recognizer had reached at the clock's time `recognizedAt` (the last audio request). */
  recognizedSeconds = 0;
  recognizedAt = 0;
  receivedSeconds = 0;
  chunkIndex = 0;
  shortChunkSeen = false;
  failure: AsrError | undefined;
  private held: TimedMessage[] = [];
  readonly recognizer: Recognizer;
  readonly chunkBytes: number;

  readonly id: string;
  readonly account: Account;
  readonly params: StartParams;
  constructor(id: string, account: Account, params: StartParams, phrasebook: Map<number, string>) {
    this.id = id;
    this.account = account;
    this.params = params;
    this.recognizer = new Recognizer(id, params, phrasebook);
    this.chunkBytes = Math.round(CHUNK_SECONDS * params.samplingRate) * bytesPerSample(params.codec);
  }

  hold(messages: TimedMessage[]): void {
    this.held.push(...messages);
  }

  /** Messages the recognizer has reached by audio time `position`. */
  release(position: number): ServerMessage[] {
    let n = 0;
    while (n < this.held.length && this.held[n]!.at <= position + 1e-9) n++;
    return this.held.splice(0, n).map((m) => m.message);
  }
}

function newToken(): string {
  return randomBytes(16).toString('base64url');
}

export function newUniqueId(): string {
  return randomBytes(16).toString('hex');
}

export interface RegistryDeps {
  timing: StreamTiming;
  phrasebook: () => Map<number, string>;
  /** The user dictionary recognition uses for an account, model and domain (emulator/vocabulary.ts). */
  userWords?: (account: Account, model: string, domainId: string) => VocabularyEntry[];
  faults: () => FaultInjector;
  stats: Stats;
  lbValue: string;
  /** Milliseconds; default `performance.now()`. */
  clock?: Clock;
}

/** Pacing of one live session, as the emulator accounts for it at a moment (see `pacing`). */
export interface PacingSnapshot {
  state: State;
  /** A request of the session is being answered (another one now is 412). */
  busy: boolean;
  /** Seconds of audio accepted so far. */
  receivedSeconds: number;
  /** Seconds of audio the recognizer has reached: it works at `ceiling` × real time on what it has. */
  recognizedSeconds: number;
  /** `receivedSeconds - recognizedSeconds`: what sits in the buffer. */
  aheadSeconds: number;
}

export class SessionRegistry {
  private live = new Map<string, StreamSession>();
  private ended = new Map<string, AsrError | undefined>();
  private timers = new Set<NodeJS.Timeout>();
  private sweeper: NodeJS.Timeout;

  private readonly now: Clock;

  private readonly deps: RegistryDeps;
  constructor(deps: RegistryDeps) {
    this.deps = deps;
    this.now = deps.clock ?? (() => performance.now());
    this.sweeper = setInterval(() => this.sweep(), 250);
    this.sweeper.unref();
  }

  get timing(): StreamTiming {
    return this.deps.timing;
  }

  get activeCount(): number {
    return this.live.size;
  }

  private deadlineMs(seconds: number): number {
    return (seconds * 1000) / this.timing.speed + this.timing.deadlineSlackMs;
  }

  private cookies(session: StreamSession): string[] {
    return [`token=${session.token}; Path=/; HttpOnly`];
  }

  /** Ends a session, freeing its slot; `pending` is an error to tell the next request (a sweep's). */
  private end(session: StreamSession, state: State, pending?: AsrError): void {
    if (this.live.get(session.id) !== session) return;
    this.live.delete(session.id);
    session.state = state;
    session.account.activeSessions--;
    const s = this.deps.stats.sessions;
    if (state === 'completed') s.completed++;
    else if (state === 'cancelled') s.cancelled++;
    else s.failed++;
    this.ended.set(session.id, pending);
    if (this.ended.size > ENDED_MEMORY) this.ended.delete(this.ended.keys().next().value!);
  }

  private fail(session: StreamSession, error: AsrError, log: Answer['log'] = {}): Answer {
    session.failure = error;
    this.end(session, 'failed');
    return {
      status: error.code,
      json: errorBody(session.id, error),
      contentType: 'application/json; charset=UTF-8',
      log: { session: session.id, code: error.code, ...log },
    };
  }

  private static errorAnswer(uniqueId: string, error: AsrError): Answer {
    return {
      status: error.code,
      json: errorBody(uniqueId, error),
      contentType: 'application/json; charset=UTF-8',
      log: { session: uniqueId || undefined, code: error.code },
    };
  }

  /** Times out sessions nobody talks to, so their slots come back (and tells the next request why). */
  sweep(now = this.now()): void {
    for (const session of this.live.values()) {
      if (session.busy) continue;
      const ready =
        session.state === 'ready' && now - session.startAnsweredAt > this.deadlineMs(DEADLINE_SECONDS);
      const idle = now - session.lastAnswerAt > this.deadlineMs(this.timing.idleSeconds);
      if (ready) {
        session.failure = asrErrors.networkError();
        this.end(session, 'failed', session.failure);
      } else if (idle) {
        session.failure = asrErrors.sessionTimeout();
        this.end(session, 'failed', session.failure);
      }
    }
  }

  start(account: Account, model: string, body: unknown): Answer {
    const v = validateStart(model, body);
    if (!v.ok) return SessionRegistry.errorAnswer(newUniqueId(), v.error);
    // A well-formed domain id that is not the account's: spec 02's remedy for 550 is "check the ASR
    // domain id".
    const domains = account.domainIds.length > 0 ? account.domainIds : [LOCAL_DOMAIN_ID];
    if (!domains.includes(v.params.domainId))
      return SessionRegistry.errorAnswer(newUniqueId(), asrErrors.noResource());
    if (account.activeSessions >= account.concurrentSessions) {
      return SessionRegistry.errorAnswer(newUniqueId(), asrErrors.noResource());
    }
    // Temporary words first: they win a tie with the user dictionary's (emulator/vocabulary.ts).
    const vocabulary = [
      ...v.params.words,
      ...(this.deps.userWords?.(account, model, v.params.domainId) ?? []),
    ];
    const session = new StreamSession(
      newUniqueId(),
      account,
      v.params,
      withVocabulary(this.deps.phrasebook(), vocabulary),
    );
    account.sessionOpened();
    this.live.set(session.id, session);
    this.deps.stats.sessions.started++;
    session.startAnsweredAt = session.lastAnswerAt = this.now();
    return {
      status: 200,
      json: [{ msg: { msgname: 'started', uniqueId: session.id } }],
      contentType: 'application/json; charset=UTF-8',
      headers: {
        'Unique-ID': session.id,
        'Set-Cookie': [
          ...this.cookies(session),
          `${this.timing.lbCookieName}=${this.deps.lbValue}; Path=/; HttpOnly`,
        ],
      },
      log: { session: session.id, messages: ['started'], words: v.params.words.length },
      onSent: () => {
        session.startAnsweredAt = session.lastAnswerAt = this.now();
      },
    };
  }

  /** Audio, stop or cancel on an existing session. */
  async request(
    kind: 'audio' | 'stop' | 'cancel' | 'invalid',
    uniqueId: string | undefined,
    cookies: Record<string, string>,
    body: Buffer,
    model: string,
  ): Promise<Answer> {
    const now = this.now();
    const session = uniqueId ? this.live.get(uniqueId) : undefined;
    if (
      !session ||
      session.params.model !== model ||
      cookies[this.timing.lbCookieName] !== this.deps.lbValue
    ) {
      // Without the load-balancer cookie the request reaches a backend that never saw this id.
      const pending = uniqueId ? this.ended.get(uniqueId) : undefined;
      if (pending && uniqueId) {
        this.ended.set(uniqueId, undefined);
        return SessionRegistry.errorAnswer(uniqueId, pending);
      }
      return SessionRegistry.errorAnswer(uniqueId ?? '', asrErrors.invalidState());
    }
    if (session.busy) return this.fail(session, asrErrors.intervalTooBrief());
    if (cookies.token !== session.token) return this.fail(session, asrErrors.invalidToken());
    if (session.state === 'ready' && now - session.startAnsweredAt > this.deadlineMs(DEADLINE_SECONDS)) {
      return this.fail(session, asrErrors.networkError());
    }
    if (
      (kind === 'stop' || kind === 'cancel') &&
      session.state === 'receiving' &&
      now - session.lastAudioAnsweredAt > this.deadlineMs(DEADLINE_SECONDS)
    ) {
      return this.fail(session, asrErrors.networkError());
    }
    if (now - session.lastAnswerAt > this.deadlineMs(this.timing.idleSeconds)) {
      return this.fail(session, asrErrors.sessionTimeout());
    }
    if (kind === 'invalid') return this.fail(session, asrErrors.invalidParameter('msg.msgname is invalid'));
    if (kind === 'audio') return this.audio(session, body, now);
    if (kind === 'cancel') {
      this.end(session, 'cancelled');
      return {
        status: 200,
        json: [{ msg: { msgname: 'completed', uniqueId: session.id, cause: 'CANCEL' } }],
        contentType: 'application/json; charset=UTF-8',
        headers: { 'Set-Cookie': this.rotate(session) },
        log: { session: session.id, messages: ['completed'] },
      };
    }
    return this.stop(session, now);
  }

  private rotate(session: StreamSession): string[] {
    session.token = newToken();
    return this.cookies(session);
  }

  /**
   * Audio seconds the recognizer has reached at `now`, never past what it received: at least real time ×
   * speed since the first audio (a stream paced at `speed` from its start is never refused, however its
   * requests bunch), and since the last audio request up to `ceiling` × real time on what it had (a leaky
   * bucket, for clients faster than `speed`). With `ceiling` = `speed` the first term always wins: a
   * leaky bucket alone, at exactly the client's pace, lets every late request ratchet the buffer up.
   */
  private position(session: StreamSession, now: number): number {
    if (!this.timing.pacing || session.firstAudioAt === undefined) return session.receivedSeconds;
    const t = this.timing;
    const realTime = ((now - session.firstAudioAt) / 1000) * t.speed;
    const worked = session.recognizedSeconds + ((now - session.recognizedAt) / 1000) * t.ceiling;
    return Math.min(session.receivedSeconds, Math.max(realTime, worked));
  }

  /** The pacing accounting of a live session now; undefined once it has ended (or never existed). */
  pacing(uniqueId: string): PacingSnapshot | undefined {
    const session = this.live.get(uniqueId);
    if (!session) return undefined;
    const recognizedSeconds = this.position(session, this.now());
    return {
      state: session.state,
      busy: session.busy,
      receivedSeconds: session.receivedSeconds,
      recognizedSeconds,
      aheadSeconds: session.receivedSeconds - recognizedSeconds,
    };
  }

  private audio(session: StreamSession, body: Buffer, now: number): Answer {
    const t = this.timing;
    const p = session.params;
    const bps = p.codec === 'pcm' ? 2 : 1;
    const seconds = body.length / bps / p.samplingRate;
    const logBase = { session: session.id, chunk: session.chunkIndex, bytes: body.length };
    // 240 ms per request, the last one may be shorter (spec 02, Limits): with strict chunks, nothing may
    // follow a shorter one.
    if (t.strictChunks && (body.length > session.chunkBytes || body.length === 0 || session.shortChunkSeen)) {
      return this.fail(session, asrErrors.invalidData(), logBase);
    }
    if (body.length !== session.chunkBytes) {
      if (body.length < session.chunkBytes) session.shortChunkSeen = true;
      this.deps.stats.nonStandardChunks++;
    }
    if (session.receivedSeconds + seconds > SERVICE_MAX_SESSION_SECONDS + 1e-9) {
      return this.fail(session, asrErrors.invalidData(), logBase);
    }
    const recognized = this.position(session, now);
    if (t.pacing) {
      const ahead = session.receivedSeconds + seconds - recognized;
      if (ahead > t.bufferSeconds + (t.pacingSlackMs / 1000) * t.ceiling + 1e-9) {
        return this.fail(session, asrErrors.intervalTooBrief(), logBase);
      }
    }
    const injected = this.deps.faults().streamError(session.receivedSeconds);
    if (injected) return this.fail(session, injected, { ...logBase, fault: `stream${injected.code}` });

    session.firstAudioAt ??= now;
    session.recognizedSeconds = recognized;
    session.recognizedAt = now;
    session.state = 'receiving';
    session.hold(session.recognizer.push(body));
    session.receivedSeconds += seconds;
    session.chunkIndex++;
    this.deps.stats.chunks++;
    this.deps.stats.audioSeconds += seconds;
    const messages = session.release(this.position(session, now));
    // Unanswered until written: a request arriving before then (under injected latency) is 412.
    session.busy = true;
    const sent = () => {
      session.busy = false;
      session.lastAnswerAt = session.lastAudioAnsweredAt = this.now();
    };
    const headers = { 'Set-Cookie': this.rotate(session) };
    const log = {
      ...logBase,
      audioSeconds: session.receivedSeconds,
      messages: messages.map((m) => m.msg.msgname),
    };
    if (messages.length === 0) return { status: 204, headers, log, onSent: sent };
    return {
      status: 200,
      json: messages,
      contentType: 'application/json; charset=UTF-8',
      headers,
      log,
      onSent: sent,
    };
  }

  private async stop(session: StreamSession, now: number): Promise<Answer> {
    // "200 returned after all recognition is complete": wait for the recognizer clock to reach the end
    // (read again after each wait: it is the session's clock that decides, not the timer), unless a
    // request that came in meanwhile ended the session.
    session.busy = true;
    for (;;) {
      const behind = session.receivedSeconds - this.position(session, now);
      if (behind <= 1e-9 || session.failure) break;
      await this.sleep(Math.max(1, (behind / this.timing.ceiling) * 1000));
      now = this.now();
    }
    session.busy = false;
    // A request that came in meanwhile ended the session: this answer tells the same error.
    if (session.failure) return SessionRegistry.errorAnswer(session.id, session.failure);
    session.hold(session.recognizer.flush());
    const messages: ServerMessage[] = [
      ...session.release(Infinity),
      { msg: { msgname: 'completed', uniqueId: session.id, cause: 'STOP' } },
    ];
    this.end(session, 'completed');
    return {
      status: 200,
      json: messages,
      contentType: 'application/json; charset=UTF-8',
      headers: { 'Set-Cookie': this.rotate(session) },
      log: {
        session: session.id,
        audioSeconds: session.receivedSeconds,
        messages: messages.map((m) => m.msg.msgname),
      },
    };
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
