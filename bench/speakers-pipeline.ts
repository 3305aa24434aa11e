/**
 * Speakers end to end: DTMF-phrase calls through the whole pipeline on a stack of the benchmark's own
 * (real Temporal, S3, ffmpeg and emulator), so the separation and the roles are measured as users get
 * them, after the recognizer's segmentation, the staged 8-kHz mu-law and the rule file's cues:
 *
 * - mono calls of two voices, each leg through its own telephone path (activities/media/telephone-path.ts),
 *   2 to 10 minutes, with and without a greeting, inbound and outbound;
 * - stereo calls with the agent on channel 0 or on channel 1, inbound and outbound, with and without a
 *   greeting (the configured map is always channel 0 = agent, so half of them must be swapped).
 *
 * Prints per-utterance speaker accuracy, the diarization error rate (0.25-s collar and none) of the mono
 * calls against their phrases' tones (and, as before 2026-11-29, against their slots, whose last silent
 * gap the recognizer never reports), role accuracy, swaps against the map without high confidence, the
 * share of calls left `mixed` or of low confidence, and the separation's CPU per audio hour. Speech calls:
 * the DER against their voiced reference (bench/lib/voiced-reference.ts: each line's speech, pauses of
 * 0.3 s or more left out; before 2026-11-29 06:00 UTC the script's whole lines), and the DER of the same result utterances each labelled with its
 * true speaker (the part of the DER no separator removes). Usage:
 *   npm run bench:speakers:pipeline -- [--speed 20] [--mono 8] [--stereo 8] [--speech 16]
 */
import { mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { scriptedCall } from '../activities/media/call-script.ts';
import { renderFixture } from '../activities/media/fixture.ts';
import { TELEPHONE_PATH_NAMES, type FixtureScript } from '../schemas/synthetic-recording.ts';
import { phraseDurationSeconds } from '../schemas/synthetic-recording.ts';
import { resolveSource, submitRecording } from '../cli/submit.ts';
import { resultDocumentSchema, type ResultDocument } from '../schemas/result.ts';
import { loadPhrasebook } from '../emulator/phrasebook.ts';
import { BENCH_CACHE } from './lib/night-set.ts';
import { startBenchStack } from './lib/bench-stack.ts';
import {
  totalDer,
  derOf,
  diarizationError,
  dtmfPhraseSpan,
  onsetOffsets,
  speakerHolding,
  truthLabelledError,
  utteranceMatches,
  type DerParts,
  type Labelled,
} from './lib/diarization-score.ts';
import { pipelineSpeechCalls, type CorpusCall } from './lib/speaker-corpus.ts';

const SPEAKERS = ['agent', 'customer'] as const;
/** A customer's answer when they pick up an outbound call (default phrasebook). */
const PICK_UP = 101;

interface BenchCall {
  name: string;
  script: FixtureScript;
  stereo: boolean;
  /** Where the agent is: channel 0 or 1 (stereo), leg 0 (mono). */
  agentChannel: 0 | 1;
  direction: 'inbound' | 'outbound';
  greeting: boolean;
}

/** An outbound call: the customer picks up first, then the scripted call follows. */
function outbound(script: FixtureScript, stereo: boolean): FixtureScript {
  const shift = phraseDurationSeconds(PICK_UP) + 1;
  const channels = script.channels.map((c) => ({
    ...c,
    phrases: c.phrases.map((p) => ({ ...p, start: Math.round((p.start + shift) * 1000) / 1000 })),
  }));
  const pickUp = { id: PICK_UP, start: 0.5, ...(stereo ? {} : { leg: 1 }) };
  channels[stereo ? 1 : 0]!.phrases.unshift(pickUp);
  return { ...script, durationSeconds: (script.durationSeconds ?? 0) + shift, channels };
}

function corpus(monoCalls: number, stereoCalls: number): BenchCall[] {
  const calls: BenchCall[] = [];
  const pairs = TELEPHONE_PATH_NAMES.flatMap((a) =>
    TELEPHONE_PATH_NAMES.filter((b) => b !== a).map((b) => [a, b] as const),
  );
  for (let i = 0; i < monoCalls; i++) {
    const durationSeconds = 120 + Math.round((480 * i) / Math.max(1, monoCalls - 1));
    const greeting = i % 3 !== 2;
    const direction = i % 4 === 3 ? 'outbound' : 'inbound';
    const legs = pairs[i % pairs.length]!;
    let { script } = scriptedCall({
      durationSeconds,
      stereo: false,
      seed: 500 + i,
      greeting,
      legs,
      complaint: i % 2 === 0,
    });
    if (direction === 'outbound') script = outbound(script, false);
    calls.push({
      name: `mono-${i}-${legs.join('+')}`,
      script,
      stereo: false,
      agentChannel: 0,
      direction,
      greeting,
    });
  }
  for (let i = 0; i < stereoCalls; i++) {
    const agentChannel = (i % 2) as 0 | 1;
    const direction = i % 4 >= 2 ? 'outbound' : 'inbound';
    const greeting = i % 8 < 4;
    let { script } = scriptedCall({ durationSeconds: 120 + 30 * i, stereo: true, seed: 700 + i, greeting });
    if (direction === 'outbound') script = outbound(script, true);
    if (agentChannel === 1) script = { ...script, channels: [script.channels[1]!, script.channels[0]!] };
    calls.push({
      name: `stereo-${i}-agent${agentChannel}-${direction}-${greeting ? 'greeting' : 'none'}`,
      script,
      stereo: true,
      agentChannel,
      direction,
      greeting,
    });
  }
  return calls;
}

/**
 * The truth of one call: per phrase its start, the end of its tones, the end of its slot (the tones and
 * the last symbol's gap, the reference before 2026-11-29), text and speaker (0 agent, 1 customer).
 */
function truthOf(call: BenchCall) {
  const book = loadPhrasebook();
  return call.script.channels
    .flatMap((c, ch) =>
      c.phrases.map((p) => {
        const leg = call.stereo ? (ch === call.agentChannel ? 0 : 1) : (p.leg ?? 0);
        return {
          ...dtmfPhraseSpan(p.start, p.id),
          slotEnd: p.start + phraseDurationSeconds(p.id),
          text: book.get(p.id)!,
          who: leg,
        };
      }),
    )
    .sort((a, b) => a.start - b.start);
}

interface Score {
  utterances: number;
  right: number;
  der: DerParts;
  /** Without collars: a DTMF phrase lasts 0.36–0.6 s, so 0.25-s collars hide most of it. */
  derNoCollar: DerParts;
  /** The same against the phrases' slots, their last silent gap counted as speech (before 2026-11-29). */
  derSlot: DerParts;
  derSlotNoCollar: DerParts;
  rolesRight: boolean;
  mixedOrLow: boolean;
  falseSwap: boolean;
  decision: string;
  separationMs: number;
  audioSeconds: number;
}

function score(call: BenchCall, doc: ResultDocument): Score {
  const truth = truthOf(call);
  let right = 0;
  const hyp: Labelled[] = [];
  for (const u of doc.utterances) {
    const who = u.speaker === 'agent' ? 0 : u.speaker === 'customer' ? 1 : null;
    hyp.push({ start: u.start, end: u.end, who });
  }
  for (const t of truth) {
    const u = doc.utterances.find((x) => Math.abs(x.start - t.start) <= 0.3);
    if (u && u.speaker === SPEAKERS[t.who]) right++;
  }
  const reference = truth.map((t) => ({ start: t.start, end: t.end, who: t.who }));
  const slots = truth.map((t) => ({ start: t.start, end: t.slotEnd, who: t.who }));
  const roles = doc.speakerRoles!;
  const agentRight = doc.utterances.filter((u) => u.speaker === 'agent').length > 0;
  return {
    utterances: truth.length,
    right,
    der: diarizationError(reference, hyp),
    derNoCollar: diarizationError(reference, hyp, 0),
    derSlot: diarizationError(slots, hyp),
    derSlotNoCollar: diarizationError(slots, hyp, 0),
    rolesRight: agentRight && right / truth.length >= 0.9,
    mixedOrLow: roles.confidence === 'low' || doc.speakers.includes('mixed'),
    // The map was right (agent on channel 0) and the call was swapped anyway, or swapped with low confidence.
    falseSwap: roles.swapped && (call.agentChannel === 0 || roles.confidence !== 'high'),
    decision: roles.decision,
    separationMs: roles.separation?.cpuMs ?? 0,
    audioSeconds: doc.audio.durationSeconds,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      speed: { type: 'string', default: '20' },
      mono: { type: 'string', default: '8' },
      stereo: { type: 'string', default: '8' },
      speech: { type: 'string', default: '16' },
      keep: { type: 'boolean', default: false },
    },
  });
  const log = (line: string) => console.log(line);
  const calls = corpus(Number(values.mono), Number(values.stereo));
  const dir = join(BENCH_CACHE, 'speakers-pipeline');
  mkdirSync(dir, { recursive: true });
  for (const c of calls) {
    const path = join(dir, `${c.name}.wav`);
    if (!existsSync(path)) await renderFixture(c.script, path, { sampleRate: 8000 });
  }
  log(`${calls.length} calls rendered in ${dir}`);
  const speech = await pipelineSpeechCalls(Number(values.speech), log);
  const bench = await startBenchStack({
    label: 'speakers',
    speed: Number(values.speed),
    budget: 16,
    keep: values.keep,
    log,
  });
  try {
    const { pc } = bench;
    const output = { bucket: pc.config.s3.bucket, prefix: `bench-speakers-${Date.now()}/` };
    const submitted = [];
    for (const c of calls) {
      const source = await resolveSource(join(dir, `${c.name}.wav`), pc.store, pc.config);
      submitted.push(
        await submitRecording(pc, source, { output, redo: true, metadata: { direction: c.direction } }),
      );
    }
    const spoken = [];
    for (const c of speech) {
      const source = await resolveSource(c.path, pc.store, pc.config);
      spoken.push(
        await submitRecording(pc, source, { output, redo: true, metadata: { direction: 'inbound' } }),
      );
    }
    const scores: { call: BenchCall; s: Score }[] = [];
    for (const [i, s] of submitted.entries()) {
      const r = await s.handle.result();
      if (!r.resultKey) throw new Error(`${calls[i]!.name}: ${r.status} ${r.reason ?? ''}`);
      const doc = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(r.resultKey)));
      scores.push({ call: calls[i]!, s: score(calls[i]!, doc) });
    }
    const speechScores: { call: CorpusCall; s: SpeechScore }[] = [];
    for (const [i, s] of spoken.entries()) {
      const r = await s.handle.result();
      if (!r.resultKey) throw new Error(`${speech[i]!.id}: ${r.status} ${r.reason ?? ''}`);
      const doc = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(r.resultKey)));
      speechScores.push({ call: speech[i]!, s: scoreSpeech(speech[i]!, doc) });
    }
    report(scores, log);
    reportSpeech(speechScores, log);
  } finally {
    await bench.close();
  }
}

interface SpeechScore {
  utterances: number;
  right: number;
  voices: number;
  der: DerParts;
  /** The DER of the same utterances each labelled with its true speaker: the part no separator removes. */
  floor: DerParts;
  /** Seconds from each script segment opening in the clear to the result utterance opening there. */
  onsets: number[];
  /** The voice named agent is the script's agent (speaker 0). */
  agentRight: boolean;
  decision: string;
  separationMs: number;
  audioSeconds: number;
}

/**
 * A speech call's result against its script: each result utterance's true speaker is the one holding most
 * of it in the voiced reference; voices are matched to speakers by the best one-to-one map, and the DER
 * taken against that reference (0.25-s collar, overlap scored).
 */
function scoreSpeech(call: CorpusCall, doc: ResultDocument): SpeechScore {
  const names = [...new Set(doc.utterances.map((u) => u.speaker))].filter((n) => n !== 'mixed');
  const reference = call.reference.map((g) => ({ start: g.start, end: g.end, who: g.speaker }));
  const truth = doc.utterances.map((u) => speakerHolding(u, reference, 3));
  const voiceOf = doc.utterances.map((u) => (names.includes(u.speaker) ? names.indexOf(u.speaker) : null));
  const { correct } = utteranceMatches(truth, voiceOf);
  const agentUtterances = doc.utterances
    .map((u, i) => (u.speaker === 'agent' ? truth[i]! : -1))
    .filter((t) => t >= 0);
  const roles = doc.speakerRoles!;
  return {
    utterances: doc.utterances.length,
    right: correct,
    voices: roles.separation?.voices ?? 0,
    der: diarizationError(
      reference,
      doc.utterances.map((u, i) => ({ start: u.start, end: u.end, who: voiceOf[i] ?? null })),
    ),
    floor: truthLabelledError(reference, doc.utterances, 3),
    onsets: onsetOffsets(call.segments, doc.utterances),
    agentRight:
      agentUtterances.length > 0 &&
      agentUtterances.filter((t) => t === 0).length > agentUtterances.length / 2,
    decision: roles.decision,
    separationMs: roles.separation?.cpuMs ?? 0,
    audioSeconds: doc.audio.durationSeconds,
  };
}

function reportSpeech(scores: { call: CorpusCall; s: SpeechScore }[], log: (line: string) => void): void {
  if (!scores.length) return;
  const pct = (n: number, d: number) => (d ? `${((100 * n) / d).toFixed(1)} %` : '—');
  log('');
  log(
    'speech call (test split)        min  utterances  voices  right    DER      floor    decision         who',
  );
  for (const { call, s } of scores) {
    log(
      `${call.id.padEnd(30)}${(call.durationSeconds / 60).toFixed(1).padStart(5)}${String(s.utterances).padStart(12)}${String(s.voices).padStart(8)}  ${pct(s.right, s.utterances).padStart(7)}  ${pct(derOf(s.der) * 100, 100).padStart(7)}  ${pct(derOf(s.floor) * 100, 100).padStart(7)}  ${s.decision.padEnd(16)} ${call.description}`,
    );
  }
  log('(floor: the DER of the same result utterances each labelled with its true speaker)');
  for (const engine of ['openjtalk', 'espeak', undefined] as const) {
    const set = scores.filter(({ call }) => engine === undefined || call.engine === engine);
    const u = set.reduce((n, { s }) => n + s.utterances, 0);
    const right = set.reduce((n, { s }) => n + s.right, 0);
    const der = totalDer(set.map(({ s }) => s.der));
    const floor = totalDer(set.map(({ s }) => s.floor));
    const worst = set.reduce((w, { s }) => Math.min(w, s.right / Math.max(1, s.utterances)), 1);
    const ms = set.reduce((n, { s }) => n + s.separationMs, 0);
    const hours = set.reduce((n, { s }) => n + s.audioSeconds, 0) / 3600;
    log('');
    log(`speech, ${engine ?? 'both synthesizers'}: ${set.length} mono calls, ${u} utterances`);
    log(`  per-utterance speaker accuracy   ${pct(right, u)} (worst call ${pct(worst, 1)})`);
    log(
      `  DER (0.25-s collar)              ${(100 * derOf(der)).toFixed(1)} % of ${(der.scored / 60).toFixed(1)} min scored ${derParts(der)}`,
    );
    log(`  DER, true speakers' labels       ${(100 * derOf(floor)).toFixed(1)} % ${derParts(floor)}`);
    for (const style of ['pure', 'dtmf+speech'] as const) {
      const onsets = set
        .filter(({ call }) => call.style === style)
        .flatMap(({ s }) => s.onsets)
        .sort((a, b) => a - b);
      const at = (q: number) => onsets[Math.floor(q * (onsets.length - 1))]!.toFixed(3);
      if (onsets.length)
        log(
          `  ${style} utterances open after the script's segment (its code for DTMF + speech): median ${at(0.5)} s, 10-90 % ${at(0.1)} to ${at(0.9)} s (${onsets.length} segments opening in the clear)`,
        );
    }
    log(`  two voices found                 ${set.filter(({ s }) => s.voices === 2).length}/${set.length}`);
    log(`  agent is the script's agent      ${set.filter(({ s }) => s.agentRight).length}/${set.length}`);
    log(`  separation CPU                   ${(ms / Math.max(1e-9, hours)).toFixed(0)} ms per audio hour`);
  }
}

const derParts = (d: DerParts) =>
  d.scored
    ? `(missed ${((100 * d.missed) / d.scored).toFixed(1)}, false alarm ${((100 * d.falseAlarm) / d.scored).toFixed(1)}, confusion ${((100 * d.confusion) / d.scored).toFixed(1)})`
    : '';

function report(scores: { call: BenchCall; s: Score }[], log: (line: string) => void): void {
  const pct = (n: number, d: number) => (d ? `${((100 * n) / d).toFixed(1)} %` : '—');
  log('');
  log(
    'call                                          utterances  right    decision        DER (no collar; against the slots)',
  );
  for (const { call, s } of scores) {
    log(
      `${call.name.padEnd(46)}${String(s.utterances).padStart(10)}  ${pct(s.right, s.utterances).padStart(7)}  ${s.decision.padEnd(15)} ${call.stereo ? '' : `${(100 * derOf(s.derNoCollar)).toFixed(1)} %; ${(100 * derOf(s.derSlotNoCollar)).toFixed(1)} %`}`,
    );
  }
  for (const kind of ['mono', 'stereo'] as const) {
    const set = scores.filter(({ call }) => call.stereo === (kind === 'stereo'));
    if (!set.length) continue;
    const u = set.reduce((n, { s }) => n + s.utterances, 0);
    const right = set.reduce((n, { s }) => n + s.right, 0);
    const der = totalDer(set.map(({ s }) => s.der));
    const bare = totalDer(set.map(({ s }) => s.derNoCollar));
    const slot = totalDer(set.map(({ s }) => s.derSlot));
    const bareSlot = totalDer(set.map(({ s }) => s.derSlotNoCollar));
    const withCue = set.filter(({ call }) => call.greeting);
    log('');
    log(`${kind}: ${set.length} calls, ${u} utterances`);
    log(`  per-utterance speaker accuracy   ${pct(right, u)}`);
    if (kind === 'mono') {
      log(
        `  DER (0.25-s collar)              ${(100 * derOf(der)).toFixed(1)} % of ${(der.scored / 60).toFixed(1)} min scored; against the slots ${(100 * derOf(slot)).toFixed(1)} %`,
      );
      log(`  DER (no collar)                  ${(100 * derOf(bare)).toFixed(1)} % ${derParts(bare)}`);
      log(
        `  DER (no collar) against the phrases' slots (their last gap as speech) ${(100 * derOf(bareSlot)).toFixed(1)} % ${derParts(bareSlot)}`,
      );
    }
    log(
      `  roles right                      ${set.filter(({ s }) => s.rolesRight).length}/${set.length} (with a greeting: ${withCue.filter(({ s }) => s.rolesRight).length}/${withCue.length})`,
    );
    log(`  mixed or low confidence          ${pct(set.filter(({ s }) => s.mixedOrLow).length, set.length)}`);
    log(`  swaps without high confidence    ${set.filter(({ s }) => s.falseSwap).length}`);
    if (kind === 'mono') {
      const ms = set.reduce((n, { s }) => n + s.separationMs, 0);
      const hours = set.reduce((n, { s }) => n + s.audioSeconds, 0) / 3600;
      log(
        `  separation CPU                   ${(ms / hours).toFixed(0)} ms per audio hour (${ms} ms for ${hours.toFixed(2)} h)`,
      );
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
