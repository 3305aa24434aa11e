/**
 * Fault injection (schemas/emulator-faults.ts): the weather a real service has, on demand and
 * reproducible. One generator seeded by `seed` (faults file, else the emulator's `seed`, else 1) makes
 * every random decision, in request order.
 */
import { readFileSync } from 'node:fs';
import {
  emulatorFaultsSchema,
  type EmulatorFaults,
  type EmulatorFaultsInput,
} from '../schemas/emulator-faults.ts';
import { asrErrorOf, type AsrError } from './asr-errors.ts';
import { seededRandom, type Random } from '../schemas/seeded-random.ts';

export type Family = 'token' | 'nlp' | 'asr';

export function readFaultsFile(path: string): EmulatorFaultsInput {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`faults file ${path}: ${(err as Error).message}`);
  }
  const parsed = emulatorFaultsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`faults file ${path}: ${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data;
}

export class FaultInjector {
  readonly faults: EmulatorFaults;
  private readonly random: Random;
  private readonly startedAt: number;
  private readonly streamErrorCounts: number[];
  /** Injections so far, by kind. */
  readonly counts: Record<string, number> = {};

  constructor(input: EmulatorFaultsInput = {}, seed = 1, startedAt = Date.now()) {
    this.faults = emulatorFaultsSchema.parse(input);
    this.random = seededRandom(this.faults.seed ?? seed);
    this.startedAt = startedAt;
    this.streamErrorCounts = this.faults.streamErrors.map(() => 0);
  }

  private count(kind: string): void {
    this.counts[kind] = (this.counts[kind] ?? 0) + 1;
  }

  private applies(families: Family[] | undefined, family: Family): boolean {
    return !families || families.includes(family);
  }

  private chance(p: number | undefined): boolean {
    // Draw only when a probability is configured, so adding a fault does not shift the others' draws.
    return p !== undefined && p > 0 && this.random() < p;
  }

  dropConnection(family: Family): boolean {
    const f = this.faults.dropConnections;
    if (!f || !this.applies(f.families, family) || !this.chance(f.probability)) return false;
    this.count('dropConnection');
    return true;
  }

  latencyMs(family: Family): number {
    const f = this.faults.latency;
    if (!f || f.ms <= 0 || !this.applies(f.families, family)) return 0;
    if (f.probability < 1 && !this.chance(f.probability)) return 0;
    this.count('latency');
    return f.ms;
  }

  serverError(family: Family): { status: number; body: string } | undefined {
    const f = this.faults.serverErrors;
    if (!f || !this.applies(f.families, family) || !this.chance(f.probability)) return undefined;
    this.count('serverError');
    return { status: f.status, body: f.body };
  }

  /** A text-analysis call blocked as a burst (99997), by schedule or probability. */
  rateBurst(now = Date.now()): boolean {
    const f = this.faults.rateLimitBursts;
    if (!f) return false;
    const t = (now - this.startedAt) / 1000;
    const inWindow = f.schedule.some((w) => t >= w.fromSeconds && t < w.toSeconds);
    if (!inWindow && !this.chance(f.probability)) return false;
    this.count('rateBurst');
    return true;
  }

  /** The access token of this request stops working now. */
  revokeToken(): boolean {
    if (!this.chance(this.faults.tokenExpiry?.probability)) return false;
    this.count('tokenExpiry');
    return true;
  }

  get earlyTokenExpirySeconds(): number | undefined {
    return this.faults.tokenExpiry?.afterSeconds;
  }

  /** A mid-stream error for an audio request of a session that has received `receivedSeconds` so far. */
  streamError(receivedSeconds: number): AsrError | undefined {
    for (const [i, rule] of this.faults.streamErrors.entries()) {
      if (rule.times !== undefined && this.streamErrorCounts[i]! >= rule.times) continue;
      const byTime = rule.afterAudioSeconds !== undefined && receivedSeconds >= rule.afterAudioSeconds;
      if (!byTime && !this.chance(rule.probability)) continue;
      this.streamErrorCounts[i]!++;
      this.count(`streamError${rule.code}`);
      return asrErrorOf(rule.code);
    }
    return undefined;
  }
}
