/** The emulator's options, the counters it reports, and what a started emulator offers its caller. */
import type { EmulatorAccountInput } from '../schemas/emulator-accounts.ts';
import type { EmulatorFaultsInput } from '../schemas/emulator-faults.ts';
import type { Phrasebook } from '../schemas/synthetic-recording.ts';
import type { Clock } from './clock.ts';
import type { Stats } from './stats.ts';
import type { PacingSnapshot } from './stream-session.ts';

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
  /**
   * A file request is answered after this × its audio seconds (÷ `speed`): the service's processing time.
   * Default 0.25 (schemas/recognition.ts).
   */
  fileRtf?: number;
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
