/**
 * End-to-end helpers: generated calls with known scripts, workers of our own on a unique task queue
 * prefix (in this process, or as a child process that a test may SIGKILL), and transcript checks.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { Worker } from '@temporalio/worker';
import type { FixtureScript } from '../../schemas/synthetic-recording.ts';
import type { Config } from '../../schemas/config.ts';
import { loadConfig } from '../../schemas/config-loader.ts';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { renderFixture, type FixtureOptions } from '../../activities/media/fixture.ts';
import { loadPhrasebook } from '../../emulator/phrasebook.ts';
import { connect, installRuntime } from '../../workers/runtime.ts';
import { createQueueWorker, QUEUE_NAMES, type QueueName } from '../../workers/workers.ts';
import { temporalClient } from '../../workers/temporal-connection.ts';
import { deploymentVersionOf, makeVersionCurrent, queuesOf } from '../../workers/versioning.ts';
import { ManagedProcess } from '../../cli/stack/process.ts';
import { stackEnv, workersProcess } from '../../cli/stack/stack.ts';
import { typeScriptNode } from '../../scripts/node-runtime.mjs';
import type { Utterance } from '../../schemas/transcript.ts';
import type { RunningEmulator } from '../../emulator/server.ts';

export interface GeneratedCall {
  path: string;
  script: FixtureScript;
}

export async function makeCall(
  dir: string,
  name: string,
  options: {
    durationSeconds: number;
    stereo?: boolean;
    seed?: number;
    personalData?: boolean;
  } & FixtureOptions,
): Promise<GeneratedCall> {
  const { durationSeconds, stereo, seed, personalData, ...fixture } = options;
  const script = generateCallScript({
    durationSeconds,
    stereo: stereo ?? false,
    seed: seed ?? 1,
    ...(personalData ? { personalData } : {}),
  });
  const path = join(dir, name);
  await renderFixture(script, path, fixture);
  return { path, script };
}

/** A unique task-queue prefix, so this test's workflows reach only this test's workers. */
export function uniquePrefix(label: string): string {
  return `t-${label}-${randomUUID().slice(0, 8)}`;
}

export function withPrefix(config: Config, prefix: string, service?: Partial<Config['service']>): Config {
  return {
    ...config,
    temporal: { ...config.temporal, taskQueuePrefix: prefix },
    service: { ...config.service, ...service },
  };
}

/**
 * The stack's variables with task queues of the test's own (`label`) and the service an emulator of the
 * test's own, paced at `speed`: what a test needs to count that emulator's requests while other files use
 * the stack's. The `callpipe` command run with them reaches the same emulator and task queues.
 */
export function envForEmulator(
  emulator: RunningEmulator,
  label: string,
  speed?: number,
): Record<string, string> {
  return {
    ...inject('stackEnv'),
    CALLPIPE_SERVICE_URL: emulator.baseUrl,
    CALLPIPE_ASR_URL: emulator.baseUrl,
    CALLPIPE_AUTH_URL: emulator.authUrl,
    CALLPIPE_CLIENT_ID: emulator.clientId,
    CALLPIPE_CLIENT_SECRET: emulator.clientSecret,
    CALLPIPE_DOMAIN_ID: emulator.domainId,
    CALLPIPE_TASK_QUEUE_PREFIX: uniquePrefix(label),
    ...(speed === undefined ? {} : { CALLPIPE_SERVICE_SPEED: String(speed) }),
  };
}

/** The configuration of `envForEmulator`. */
export function configForEmulator(emulator: RunningEmulator, label: string, speed: number): Config {
  return loadConfig({ env: envForEmulator(emulator, label, speed) });
}

/** Every queue's worker (or those of `queues`) in this process, until `stop()`. */
export async function inProcessWorkers(
  config: Config,
  queues: QueueName[] = QUEUE_NAMES,
): Promise<{ stop: () => Promise<void> }> {
  installRuntime({ ...config, logLevel: 'warn' });
  process.env.CALLPIPE_WORKFLOW_BUNDLE = inject('workflowBundlePath');
  const connection = await connect(config);
  const workers: Worker[] = await Promise.all(
    queues.map((q) => createQueueWorker(q, { config, connection })),
  );
  const running = Promise.all(workers.map((w) => w.run()));
  // Versioned workers take work once their version is current: this prefix's deployment has none yet.
  await makeVersionCurrent(temporalClient(connection, config.temporal), deploymentVersionOf(config), {
    queues: queuesOf(workers, config),
    onlyIfNone: true,
  });
  return {
    async stop() {
      workers.forEach((w) => w.shutdown());
      await running;
      await connection.close();
    },
  };
}

/** Every queue's worker in a child process (the stack's worker entry), which a test may SIGKILL. */
export function childWorkers(
  config: Config,
  logFile: string,
  extraEnv: Record<string, string> = {},
): ManagedProcess {
  return workersProcess(
    {
      ...process.env,
      ...stackEnv(config),
      CALLPIPE_TASK_QUEUE_PREFIX: config.temporal.taskQueuePrefix,
      CALLPIPE_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      CALLPIPE_METRICS_PORT: '0',
      ...extraEnv,
    },
    logFile,
  );
}

/** An asr-only worker process (`workers/asr.ts`), as a deployment runs several; a test may SIGKILL it. */
export function asrWorkerProcess(
  config: Config,
  logFile: string,
  extraEnv: Record<string, string> = {},
): ManagedProcess {
  return new ManagedProcess({
    name: 'asr-worker',
    command: typeScriptNode(),
    args: [fileURLToPath(new URL('../../workers/asr.ts', import.meta.url))],
    env: {
      ...process.env,
      ...stackEnv(config),
      CALLPIPE_TASK_QUEUE_PREFIX: config.temporal.taskQueuePrefix,
      CALLPIPE_METRICS_PORT: '0',
      ...extraEnv,
    },
    logFile,
    readyWhenLogged: '"workers ready"',
    startTimeoutMs: 120_000,
  });
}

/**
 * The speaker of an expected utterance when a test checks words and times, not who said them (a mono
 * call's speakers are inferred from voices: test/integration/speakers.test.ts checks those).
 */
export const ANY_SPEAKER = '*';

/** Names of the legs of a two-leg mono script (activities/media/call-script.ts: 0 agent, 1 customer). */
export const LEG_SPEAKERS = ['agent', 'customer'] as const;

export interface ExpectedUtterance {
  speaker: string;
  start: number;
  text: string;
}

/** The utterances a script should produce, with the stack's speaker labels. */
export function expectedUtterances(script: FixtureScript, speakers: string[]): ExpectedUtterance[] {
  const book = loadPhrasebook();
  return script.channels
    .flatMap((ch, i) =>
      ch.phrases.map((p) => ({ speaker: speakers[i]!, start: p.start, text: book.get(p.id)! })),
    )
    .sort((a, b) => a.start - b.start);
}

/** A redaction's mask in stored text (`[氏名]`, `[電話番号 ***5678]`). */
const MASK = /\[[^[\]]+\]/gu;

/**
 * Whether stored `text` is what `said` was, redacted: equal word for word, each mask standing for some
 * of the words (personal data is redacted by default). Punctuation is not guaranteed (spec 02,
 * behaviour 2) and spaces depend on `delimiter`: words are compared.
 */
export function saysRedacted(text: string, said: string): boolean {
  const norm = (t: string) => t.replace(/[\s、。，．,.?？!！]+/g, '');
  const parts = text.split(MASK).map((p) => norm(p).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.+')}$`, 'u').test(norm(said));
}

/** Pairs recognized utterances with expected ones; returns what is missing, extra or misplaced. */
export function compareTranscript(
  got: Pick<Utterance, 'speaker' | 'start' | 'text'>[],
  expected: ExpectedUtterance[],
  toleranceSeconds = 0.3,
) {
  const unmatched = [...got];
  const missing: ExpectedUtterance[] = [];
  for (const e of expected) {
    const i = unmatched.findIndex(
      (u) =>
        (e.speaker === ANY_SPEAKER || u.speaker === e.speaker) &&
        saysRedacted(u.text, e.text) &&
        Math.abs(u.start - e.start) <= toleranceSeconds,
    );
    if (i < 0) missing.push(e);
    else unmatched.splice(i, 1);
  }
  return { missing, extra: unmatched };
}
