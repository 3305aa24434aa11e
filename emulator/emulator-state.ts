/**
 * Everything one running emulator holds: its accounts, tokens, user dictionaries, stream sessions,
 * fault injector (replaceable while running), counters and request log. The routes read and change it.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { EmulatorFaultsInput } from '../schemas/emulator-faults.ts';
import { phrasebookSchema } from '../schemas/synthetic-recording.ts';
import { Account, AccountStore, defaultAccountInput, readAccountsFile } from './accounts.ts';
import { ClassifierModels } from './nlp/classifier.ts';
import { FaultInjector, readFaultsFile } from './faults.ts';
import type { FileTiming } from './file-recognition.ts';
import { DEFAULT_FILE_RTF } from '../schemas/recognition.ts';
import { bearerToken } from './http.ts';
import type { EmulatorOptions, EmulatorStats } from './options.ts';
import { DEFAULT_PHRASEBOOK_PATH, loadPhrasebook, phrasebookMap } from './phrasebook.ts';
import { RequestLog, Stats } from './stats.ts';
import {
  DEFAULT_BUFFER_SECONDS,
  DEFAULT_DEADLINE_SLACK_MS,
  DEFAULT_IDLE_SECONDS,
  DEFAULT_LB_COOKIE,
  DEFAULT_PACING_SLACK_MS,
  SessionRegistry,
  type StreamTiming,
} from './stream-session.ts';
import { DEFAULT_TOKEN_LIFETIME_SECONDS, TokenStore } from './tokens.ts';
import { dictionaryKey, UserDictionaries } from './vocabulary.ts';

/** The time scale and the fastest accepted pacing, checked: both positive (and the ceiling finite). */
function checkedSpeeds(options: EmulatorOptions): { speed: number; ceiling: number } {
  const speed = options.speed ?? 1;
  if (!(speed > 0)) throw new Error(`speed must be positive, got ${speed}`);
  const ceiling = options.ceiling ?? speed;
  if (!(ceiling > 0) || !Number.isFinite(ceiling))
    throw new Error(`ceiling must be positive, got ${ceiling}`);
  return { speed, ceiling };
}

function accountInputsOf(options: EmulatorOptions) {
  if (options.accounts) return options.accounts;
  if (options.accountsPath) return readAccountsFile(options.accountsPath);
  return [
    defaultAccountInput(options.concurrentSessions ? { concurrentSessions: options.concurrentSessions } : {}),
  ];
}

function phrasebookOf(options: EmulatorOptions) {
  return options.phrasebook
    ? phrasebookMap(phrasebookSchema.parse(options.phrasebook))
    : loadPhrasebook(options.phrasebookPath ?? DEFAULT_PHRASEBOOK_PATH);
}

/** The time rules of stream sessions, from the options and their defaults. */
function streamTimingOf(options: EmulatorOptions, speed: number, ceiling: number): StreamTiming {
  return {
    speed,
    ceiling,
    pacing: (options.pacing ?? 'on') === 'on',
    bufferSeconds: options.bufferSeconds ?? DEFAULT_BUFFER_SECONDS,
    deadlineSlackMs: options.deadlineSlackMs ?? options.slackMs ?? DEFAULT_DEADLINE_SLACK_MS,
    pacingSlackMs: options.pacingSlackMs ?? options.slackMs ?? DEFAULT_PACING_SLACK_MS,
    strictChunks: options.strictChunks ?? false,
    idleSeconds: options.idleSeconds ?? DEFAULT_IDLE_SECONDS,
    lbCookieName: options.lbCookieName ?? DEFAULT_LB_COOKIE,
  };
}

export class EmulatorState {
  /** Only differences of its readings matter, except a token's `issued_at`: epoch milliseconds. */
  readonly wallNow: () => number;
  readonly accounts: AccountStore;
  readonly phrasebook: Map<number, string>;
  readonly tokens: TokenStore;
  readonly dictionaries: UserDictionaries;
  readonly stats = new Stats();
  readonly log: RequestLog;
  readonly sessions: SessionRegistry;
  readonly classifiers: ClassifierModels;
  /** How long a file request takes (file-recognition.ts). */
  readonly fileTiming: FileTiming;
  faults: FaultInjector;
  readonly #seed: number;
  readonly #startedAt: number;

  constructor(options: EmulatorOptions) {
    const { speed, ceiling } = checkedSpeeds(options);
    const accountInputs = accountInputsOf(options);
    this.wallNow = options.clock ?? Date.now;
    this.accounts = new AccountStore(accountInputs, this.wallNow);
    this.phrasebook = phrasebookOf(options);
    this.#startedAt = this.wallNow();
    this.#seed = options.seed ?? 1;
    const faultsInput =
      typeof options.faults === 'string' ? readFaultsFile(options.faults) : (options.faults ?? {});
    this.faults = new FaultInjector(faultsInput, this.#seed, this.#startedAt);
    this.tokens = new TokenStore(
      options.tokenLifetimeSeconds ?? DEFAULT_TOKEN_LIFETIME_SECONDS,
      this.faults.earlyTokenExpirySeconds,
    );
    this.dictionaries = new UserDictionaries(this.wallNow, speed);
    const rtf = options.fileRtf ?? DEFAULT_FILE_RTF;
    if (!(rtf >= 0) || !Number.isFinite(rtf)) throw new Error(`file rtf must be 0 or more, got ${rtf}`);
    this.fileTiming = { rtf, speed };
    this.log = new RequestLog(options.requestLogPath);
    this.classifiers = new ClassifierModels(this.wallNow, speed);
    this.sessions = new SessionRegistry({
      timing: streamTimingOf(options, speed, ceiling),
      phrasebook: () => this.phrasebook,
      userWords: (account, model, domainId) => this.userWords(account, model, domainId),
      faults: () => this.faults,
      stats: this.stats,
      lbValue: `emu-${randomBytes(4).toString('hex')}`,
      ...(options.clock ? { clock: options.clock } : {}),
    });
  }

  /** The words of the account's active user dictionary for this model and domain. */
  userWords(account: Account, model: string, domainId: string) {
    return this.dictionaries.active(dictionaryKey(account.clientId, model, domainId));
  }

  /** The account of the request's bearer token, honouring injected token expiry. */
  authenticate(req: IncomingMessage): Account | undefined {
    const token = bearerToken(req);
    const account = this.tokens.verify(token, this.wallNow());
    if (account && token && this.faults.revokeToken()) {
      this.tokens.revoke(token);
      return undefined;
    }
    return account;
  }

  /** Counters from zero; an account's peak from the sessions open now. */
  resetStats(): void {
    this.stats.reset();
    for (const a of this.accounts.all()) a.peakSessions = a.activeSessions;
  }

  snapshot(): EmulatorStats {
    return this.stats.snapshot({
      activeSessions: this.sessions.activeCount,
      faultsInjected: this.faults.counts,
      accounts: this.accounts.all().map((a) => ({
        clientId: a.clientId,
        kind: a.kind,
        activeSessions: a.activeSessions,
        peakSessions: a.peakSessions,
      })),
    });
  }

  /** Replaces fault injection, its clock still counting from the emulator's start. */
  setFaults(input: EmulatorFaultsInput): void {
    this.faults = new FaultInjector(input, this.#seed, this.#startedAt);
    this.tokens.setEarlyExpiry(this.faults.earlyTokenExpirySeconds);
  }
}
