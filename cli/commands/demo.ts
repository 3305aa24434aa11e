/**
 * `callpipe demo`: the main job on the local stack, from nothing. Starts the stack (or uses the one
 * `callpipe up` runs), generates three sample calls, processes them through the whole pipeline and
 * prints a table, where the results are, and the Web UI link.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseCommandArgs } from '../command.ts';
import { loadConfig } from '../../schemas/config-loader.ts';
import { type Config } from '../../schemas/config.ts';
import { startStack, type RunningStack } from '../stack/stack.ts';
import { readStackFile } from '../stack/stack-record.ts';
import { connectPipeline, pipelineConfig } from '../stack-client.ts';
import { outputLocation, resolveSource, submitRecording } from '../submit.ts';
import {
  outcomeDetail,
  outcomeExitCode,
  outcomeTally,
  waitWithProgress,
  type CallOutcome,
} from './process.ts';
import { scriptedCall, type CallScenario } from '../../activities/media/call-script.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { callOutputKeys, locationUrl } from '../../schemas/call-keys.ts';
import type { ObjectStore } from '../../activities/storage/object-store.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import type { ResultDocument } from '../../schemas/result.ts';
import { textTable } from '../text-table.ts';

export const summary = 'starts the local stack, processes three sample calls, prints the results';
export const help = `Usage: callpipe demo [--keep] [--speed X]

Starts the local stack under $CALLPIPE_HOME (default .callpipe/) unless \`callpipe up\` already runs there,
generates three sample calls (a stereo call of about an hour at 44.1 kHz in M4A, a short mono 8 kHz WAV,
a mono recording longer than 3,000 s, scripted with greetings or none, holds, a complaint and talk-over),
processes them and prints a table (with each call's scorecard and matched categories), where the results
are and the Web UI link.

  --speed X   emulator time scale (default 100, or CALLPIPE_EMULATOR_SPEED): recognition runs X× real time
  --keep      leave the stack running afterwards (then open the Web UI)`;

/**
 * The three sample calls: name, rate and scenario (activities/media/call-script.ts). Seeds fixed so every
 * demo shows the same calls; between them they exercise every kind of rule of the default rule file: a
 * greeting and none, identity checks, a complaint and an apology, personal data, holds of 45 s and 150 s,
 * the agent talking over the customer, closings.
 */
export const DEMO_CALLS = [
  {
    name: 'sample-stereo-1h.m4a',
    sampleRate: 44100,
    scenario: {
      durationSeconds: 3540,
      stereo: true,
      seed: 101,
      complaint: true,
      personalData: true,
      holdSeconds: 45,
      overlap: true,
    },
  },
  {
    name: 'sample-short-mono.wav',
    sampleRate: 8000,
    scenario: { durationSeconds: 95, stereo: false, seed: 202, greeting: false },
  },
  {
    name: 'sample-long-mono.wav',
    sampleRate: 8000,
    scenario: { durationSeconds: 3300, stereo: false, seed: 303, holdSeconds: 150 },
  },
] as const satisfies readonly DemoCall[];

/** One sample call: its file name, sample rate and scenario. */
export type DemoCall = { name: string; sampleRate: number; scenario: CallScenario };

/**
 * Renders the demo's calls (or `calls` of the same shape) into `dir`, again when a call's script changed:
 * its script is kept beside it.
 */
export async function ensureDemoCalls(
  dir: string,
  log: (line: string) => void,
  calls: readonly DemoCall[] = DEMO_CALLS,
): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const paths: string[] = [];
  for (const s of calls) {
    const path = join(dir, s.name);
    const { script } = scriptedCall(s.scenario);
    const scriptPath = `${path}.script.json`;
    const scriptText = JSON.stringify(script);
    if (!existsSync(path) || !existsSync(scriptPath) || readFileSync(scriptPath, 'utf8') !== scriptText) {
      const t0 = Date.now();
      await renderFixture(script, path, { sampleRate: s.sampleRate });
      writeFileSync(scriptPath, scriptText);
      log(
        `generated ${s.name} (${s.scenario.durationSeconds} s, ${s.scenario.stereo ? 'stereo' : 'mono'}, ${s.sampleRate} Hz) in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
      );
    }
    paths.push(path);
  }
  return paths;
}

interface ResultDigest {
  sentiment: string;
  score: string;
  categories: string;
  summary: string;
  /** Redactions in all, and a few redacted lines to show them. */
  redacted: string;
  examples: string[];
  /** Who is who and how it was decided: `agent+customer (inferred)`. */
  speakers: string;
  /** The opening lines with their speakers, on calls whose speakers were inferred from voices. */
  opening: string[];
}

async function digest(store: ObjectStore, output: OutputLocation, o: CallOutcome): Promise<ResultDigest> {
  const none = {
    sentiment: '',
    score: '',
    categories: '',
    summary: '',
    redacted: '',
    examples: [],
    speakers: '',
    opening: [],
  };
  if (o.status === 'failed') return { ...none, summary: outcomeDetail(o) };
  try {
    const doc = JSON.parse(
      await store.withBucket(output.bucket).getText(callOutputKeys(output, o.callId).result),
    ) as Pick<
      ResultDocument,
      | 'summary'
      | 'sentiment'
      | 'scorecard'
      | 'categories'
      | 'redaction'
      | 'utterances'
      | 'speakers'
      | 'speakerRoles'
    >;
    const roles = doc.speakerRoles;
    const text = doc.summary?.text ?? '';
    const overall = doc.sentiment?.overall;
    return {
      sentiment: overall
        ? `${overall.label ?? ''} ${overall.meanValue !== null ? overall.meanValue.toFixed(2) : ''}`.trim()
        : '',
      score: doc.scorecard ? `${doc.scorecard.score}/${doc.scorecard.max}` : '',
      categories: (doc.categories ?? [])
        .filter((c) => c.matched)
        .map((c) => c.name)
        .join(' '),
      summary: text.length > 48 ? `${text.slice(0, 47)}…` : text,
      redacted: doc.redaction ? String(doc.redaction.total) : '',
      examples: doc.utterances
        .filter((u) => (u.redactions ?? []).length > 0)
        .slice(0, 4)
        .map((u) => `${u.speaker}: ${u.text}`),
      speakers: `${doc.speakers.join('+')}${roles ? ` (${roles.decision})` : ''}`,
      opening: roles?.inferred
        ? doc.utterances.slice(0, 3).map((u) => `${u.speaker.padEnd(8)} ${u.text.slice(0, 40)}`)
        : [],
    };
  } catch {
    return none;
  }
}

/** The calls' table, then what the demo shows of them: mono calls' speakers, redactions, partial steps. */
async function printOutcomes(
  store: ObjectStore,
  output: OutputLocation,
  outcomes: CallOutcome[],
  log: (line: string) => void,
): Promise<void> {
  const rows = [
    [
      'call',
      'status',
      'duration',
      'sessions',
      'utterances',
      'speakers',
      'redacted',
      'sentiment',
      'score',
      'categories',
    ],
  ];
  const openings: string[] = [];
  const summaries: string[] = [];
  let examples: string[] = [];
  for (const o of outcomes) {
    const d = await digest(store, output, o);
    rows.push([
      o.callId,
      o.status,
      o.durationSeconds !== undefined ? `${(o.durationSeconds / 60).toFixed(1)} min` : '',
      o.sessions !== undefined ? String(o.sessions) : '',
      o.utterances !== undefined ? String(o.utterances) : '',
      d.speakers,
      d.redacted,
      d.sentiment,
      d.score,
      d.categories,
    ]);
    if (d.summary) summaries.push(`  ${o.callId}: ${d.summary}`);
    if (d.examples.length > examples.length) examples = d.examples;
    if (d.opening.length) openings.push(`  ${o.callId}:`, ...d.opening.map((l) => `    ${l}`));
  }
  log('');
  log(textTable(rows));
  // Mono calls: who said what was told apart by voice and named by what each says.
  if (openings.length > 0) {
    log('');
    log('speakers of mono calls, told apart by voice and named by what they say:');
    for (const line of openings) log(line);
  }
  // Personal data never reaches result.json: show what stands in its place.
  if (examples.length > 0) {
    log('');
    log('personal data is redacted in every stored text, e.g.:');
    for (const line of examples) log(`  ${line}`);
  }
  log(outcomeTally(outcomes));
  // A partial call's results are written, but a text step failed: say which, and why.
  for (const o of outcomes.filter((c) => c.status === 'partial'))
    for (const f of o.stepFailures ?? []) log(`  ${o.callId}: ${f.step} failed: ${f.reason}`);
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(
    'demo',
    argv,
    { keep: { type: 'boolean', default: false }, speed: { type: 'string' } },
    false,
  );
  const log = (line: string) => console.log(line);
  // The demo's own defaults, beneath the environment (and --speed over it). Real-time recognition of two
  // hours of audio would take an hour: the emulator runs faster. Sentiment is one request per utterance:
  // text steps use most of the emulator account's 50 requests/s.
  const env: NodeJS.ProcessEnv = {
    CALLPIPE_EMULATOR_SPEED: '100',
    CALLPIPE_NLP_RPS: '45',
    ...process.env,
    ...(values.speed !== undefined ? { CALLPIPE_EMULATOR_SPEED: values.speed } : {}),
  };
  const base: Config = loadConfig({ env });
  const started = Date.now();

  let stack: RunningStack | undefined;
  if (readStackFile(base.stack.home)) {
    log(`using the stack already running from ${resolve(base.stack.home)}`);
  } else {
    log(
      `starting the local stack in ${resolve(base.stack.home)} (emulator at ${base.stack.emulatorSpeed}× real time)…`,
    );
    stack = await startStack({ config: base, log: (line) => log(`  ${line}`) });
  }
  const resolved = stack ? { config: stack.config, webUiUrl: stack.addresses.webUiUrl } : pipelineConfig(env);
  const pc = await connectPipeline(resolved.config, resolved.webUiUrl);
  try {
    const samples = await ensureDemoCalls(join(resolve(base.stack.home), 'demo'), log);
    const output = outputLocation(undefined, pc.config);
    const submitted = [];
    for (const path of samples) {
      const source = await resolveSource(path, pc.store, pc.config);
      submitted.push(await submitRecording(pc, source, { output }));
    }
    log(`processing ${submitted.length} calls…`);
    const outcomes = await waitWithProgress(submitted, false);

    await printOutcomes(pc.store, output, outcomes, log);
    log('');
    log(
      `results:  ${locationUrl(output)}<call>/result.json and transcript.vtt (S3 endpoint ${pc.config.s3.endpoint})`,
    );
    if (pc.webUiUrl) log(`Web UI:   ${pc.webUiUrl}/namespaces/${pc.config.temporal.namespace}/workflows`);
    log(
      `finished in ${((Date.now() - started) / 1000).toFixed(0)} s${stack && !values.keep ? '; stopping the stack (use --keep to leave it running)' : ''}`,
    );
    return outcomeExitCode(outcomes);
  } finally {
    await pc.close();
    if (stack && !values.keep) await stack.stop();
  }
}
