/**
 * Voice separation benchmark (activities/speakers/voice-separation.ts): how well the utterances of mono
 * calls are told apart by voice, on voices no parameter was chosen on, and what it costs beside the media
 * work the pipeline already does.
 *
 *   npm run bench:speakers                    # both splits; builds the corpus once (cached), then scores it
 *   npm run bench:speakers -- --split test    # the test split only
 *   npm run bench:speakers -- --passes 5      # each call's media work and separation measured 5 times
 *   npm run bench:speakers -- --split dev --only two-29,two-30   # some calls of a split (no verdict)
 *   npm run bench:speakers -- --spans recognizer   # the recognizer's segments, not the script's lines
 *
 * The corpus (bench/lib/speaker-corpus.ts) has a development split, which parameters may be chosen on,
 * and a test split of other seeds, voices, lines and scripts, which chooses nothing: two-voice calls of
 * Open JTalk and espeak-ng voices (women, men, same-sex and close pairs; pure speech and DTMF + speech;
 * one shared line or one per leg; 1 to 60 minutes), DTMF-only calls whose legs differ by their line,
 * one-voice calls and transfers to a third voice. Each call is staged as the pipeline does (8-kHz
 * mu-law with its conditioning), read through the speakers stage's own reader, and given the script's
 * segments as a recognizer would report them (overlapping ones merged, the truth being who holds most);
 * with `--spans recognizer`, the emulator's own segments of the staged track instead, as the pipeline gets
 * them (bench/lib/recognizer-spans.ts).
 *
 * Prints per call and per group: utterance accuracy (best map of voices to speakers), the diarization
 * error rate against the voiced reference (bench/lib/voiced-reference.ts; 0.25-s collar, overlap scored;
 * and without collars; and of the same spans each given its true speaker), unassigned utterances, joined ones
 * found against the truth, voice counts, the worst two-voice call, and the CPU of separateVoices per audio
 * hour and as a share of the CPU of the call's channel analysis, which writes its track, as the pipeline runs it.
 * The exit code is the test split's verdict: accuracy ≥ 95 %, DER ≤ 10 %, every two-voice call ≥ 90 %,
 * voice counts right, transfers found in ≥ 5 of 6, cost ≤ 10 %.
 *
 * The cost is the least CPU of several passes, for the separation and for the media work alike, in the
 * same run: on a machine shared with other work a single pass measures the load as much as the code
 * (the same call's separation varied by a factor of two from pass to pass), while the least of a few
 * passes is what the work itself needs, and both sides of the ratio are measured the same way.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stagedAudioReader } from '../activities/speakers/speakers-activities.ts';
import { analyzerFor, voicedFrames } from '../activities/speakers/voice-features.ts';
import { analysisSteps, type SeparationResult } from '../activities/speakers/voice-separation.ts';
import { voiceSeparator } from '../activities/speakers/speaker-separator.ts';
import {
  derOf,
  diarizationError,
  totalDer,
  utteranceMatches,
  type DerParts,
} from './lib/diarization-score.ts';
import { speakerCorpus, type CallKind, type CorpusCall, type Split } from './lib/speaker-corpus.ts';
import { withRecognizerSpans } from './lib/recognizer-spans.ts';
import { stagedTrack } from './lib/staged-track.ts';

const TARGET_ACCURACY = 0.95;
const TARGET_CALL_ACCURACY = 0.9;
const TARGET_DER = 0.1;
const TARGET_COST = 0.1;
/** A span is truly joined when its minority speakers hold at least this long of it. */
const JOINED_MIN_SECONDS = 0.2;
/**
 * Separations of the first call before measuring: the JIT keeps optimizing over the first few calls (one
 * separation left the next calls at two to three times their later cost), and a worker separates many.
 */
const WARM_UP_SEPARATIONS = 4;
/** Passes over each call whose least CPU is its cost (see the module comment). */
const DEFAULT_PASSES = 3;

const { values } = parseArgs({
  options: {
    split: { type: 'string' },
    passes: { type: 'string' },
    verbose: { type: 'boolean' },
    /** Only these calls of the split, by id (`two-29,two-30`): a look at a few, never the split's verdict. */
    only: { type: 'string' },
    /** `lines` (the script's lines, the default) or `recognizer` (the emulator's segments of the track). */
    spans: { type: 'string' },
    /** A folder: each call's utterance embeddings and truth as JSON (tuning the clustering offline). */
    dump: { type: 'string' },
  },
});
/** The separator the stage would use here (CALLPIPE_SPEAKER_MODEL: the model when installed). */
const separator = voiceSeparator();
const separateVoices: typeof separator.separate = (audio, spans, options) =>
  separator.separate(audio, spans, options);
const passes = Math.max(1, Math.floor(Number(values.passes ?? DEFAULT_PASSES)) || DEFAULT_PASSES);
if (values.spans !== undefined && values.spans !== 'lines' && values.spans !== 'recognizer')
  throw new Error(`--spans: lines or recognizer, not ${values.spans}`);
const recognizerSpans = values.spans === 'recognizer';

function dumpEmbeddings(
  call: CorpusCall,
  embeddings: readonly (Float32Array | undefined)[],
  frames: readonly number[],
): void {
  mkdirSync(values.dump!, { recursive: true });
  const rows = {
    id: call.id,
    kind: call.kind,
    voices: call.voices,
    speakers: call.spans.map((s) => s.speaker),
    starts: call.spans.map((s) => s.start),
    frames,
    embeddings: embeddings.map((e) => (e ? Array.from(e, (x) => Math.round(x * 1e5) / 1e5) : null)),
  };
  writeFileSync(join(values.dump!, `${call.id}.json`), JSON.stringify(rows));
}

interface Scored {
  call: CorpusCall;
  result: SeparationResult;
  der: DerParts;
  /** Without collars: DTMF phrases (0.36 to 0.6 s) are mostly inside the 0.25-s collars. */
  derNoCollar: DerParts;
  /** The DER of the same spans each given its true speaker: the part no separator removes. */
  floor: DerParts;
  utterances: number;
  assigned: number;
  correct: number;
  joinedTrue: number;
  joinedFound: number;
  joinedHit: number;
  mediaMs: number;
  /** Frames the separator analysed (its utterances' frames above their quiet floor). */
  frames: number;
}

/** The voiced frames separateVoices models for this call, counted apart (outside its measured CPU). */
function framesOf(reader: ReturnType<typeof stagedAudioReader>, call: CorpusCall): number {
  const analyzer = analyzerFor(reader.sampleRate);
  const steps = analysisSteps(call.spans);
  return call.spans.reduce((n, s, u) => n + voicedFrames(reader, s, analyzer, steps[u]).count, 0);
}

function score(call: CorpusCall, result: SeparationResult, mediaMs: number, frames: number): Scored {
  const voices = result.assignments.map((a) => a.voice);
  const { assigned, correct } = utteranceMatches(
    call.spans.map((s) => s.speaker),
    voices,
  );
  const reference = call.reference.map((s) => ({ start: s.start, end: s.end, who: s.speaker }));
  const hypothesis = call.spans.map((s, i) => ({ start: s.start, end: s.end, who: voices[i] ?? null }));
  const der = diarizationError(reference, hypothesis);
  const derNoCollar = diarizationError(reference, hypothesis, 0);
  const floor = diarizationError(
    reference,
    call.spans.map((s) => ({ start: s.start, end: s.end, who: s.speaker })),
  );
  const trulyJoined = call.spans.map((s) => {
    const minority = Object.entries(s.seconds).filter(([who]) => Number(who) !== s.speaker);
    return minority.some(([, seconds]) => seconds >= JOINED_MIN_SECONDS);
  });
  const found = result.assignments.map((a) => a.joined);
  return {
    call,
    result,
    der,
    derNoCollar,
    floor,
    utterances: call.spans.length,
    assigned,
    correct,
    joinedTrue: trulyJoined.filter(Boolean).length,
    joinedFound: found.filter(Boolean).length,
    joinedHit: found.filter((f, i) => f && trulyJoined[i]).length,
    mediaMs,
    frames,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const pad = (s: string | number, n: number) => String(s).padStart(n);

function summary(label: string, rows: Scored[]): { accuracy: number; der: number; cost: number } {
  const der = totalDer(rows.map((r) => r.der));
  const bare = totalDer(rows.map((r) => r.derNoCollar));
  const floor = totalDer(rows.map((r) => r.floor));
  const utterances = rows.reduce((a, r) => a + r.utterances, 0);
  const assigned = rows.reduce((a, r) => a + r.assigned, 0);
  const correct = rows.reduce((a, r) => a + r.correct, 0);
  const hours = rows.reduce((a, r) => a + r.call.durationSeconds, 0) / 3600;
  const cpuMs = rows.reduce((a, r) => a + r.result.cpuMs, 0);
  const mediaMs = rows.reduce((a, r) => a + r.mediaMs, 0);
  const frames = rows.reduce((a, r) => a + r.frames, 0);
  const joinedTrue = rows.reduce((a, r) => a + r.joinedTrue, 0);
  const joinedFound = rows.reduce((a, r) => a + r.joinedFound, 0);
  const joinedHit = rows.reduce((a, r) => a + r.joinedHit, 0);
  const countRight = rows.filter((r) => r.result.voices === r.call.voices).length;
  const accuracy = assigned ? correct / assigned : 0;
  console.log(
    `\n${label}: ${rows.length} calls, ${(hours * 60).toFixed(1)} min of audio, ${utterances} utterances`,
  );
  console.log(
    `  utterance accuracy      ${pct(accuracy)} of those given a voice (${correct}/${assigned}); ${pct(correct / Math.max(1, utterances))} of all`,
  );
  console.log(`  left unassigned         ${pct((utterances - assigned) / Math.max(1, utterances))}`);
  console.log(
    `  DER (collar 0.25 s)     ${pct(derOf(der))} = missed ${pct(der.missed / der.scored)} + false alarm ${pct(der.falseAlarm / der.scored)} + confusion ${pct(der.confusion / der.scored)} (of ${(der.scored / 60).toFixed(1)} min scored)`,
  );
  console.log(
    `  DER (no collar)         ${pct(derOf(bare))} = missed ${pct(bare.missed / bare.scored)} + false alarm ${pct(bare.falseAlarm / bare.scored)} + confusion ${pct(bare.confusion / bare.scored)} (of ${(bare.scored / 60).toFixed(1)} min scored)`,
  );
  console.log(
    `  DER, true speakers      ${pct(derOf(floor))} = missed ${pct(floor.missed / floor.scored)} + false alarm ${pct(floor.falseAlarm / floor.scored)} + confusion ${pct(floor.confusion / floor.scored)} (the same spans each given its true speaker; collar 0.25 s)`,
  );
  console.log(
    `  joined utterances       ${joinedFound} found, ${joinedHit} of them truly joined; ${joinedTrue} truly joined (minority ≥ ${JOINED_MIN_SECONDS} s)`,
  );
  console.log(`  voice count right       ${countRight}/${rows.length}`);
  const cost = mediaMs > 0 ? cpuMs / mediaMs : 0;
  console.log(
    `  CPU                     separateVoices ${(cpuMs / hours).toFixed(0)} ms per audio hour; channel analysis and track ${(mediaMs / hours).toFixed(0)} ms per audio hour; ratio ${pct(cost)}`,
  );
  console.log(
    `  frames                  ${(frames / hours).toFixed(0)} analysed per audio hour; ${((1000 * cpuMs) / Math.max(1, frames)).toFixed(1)} µs of separateVoices CPU per frame (reading, features and clustering)`,
  );
  return { accuracy, der: derOf(der), cost };
}

interface SplitFigures {
  verdicts: (readonly [string, boolean])[];
}

async function runSplit(split: Split): Promise<SplitFigures> {
  const t0 = performance.now();
  const only = values.only?.split(',').map((id) => id.trim());
  const corpus = (await speakerCorpus({ split, log: (line) => console.log(line) })).filter(
    (call) => !only || only.includes(call.id),
  );
  console.log(
    `\n=== ${split === 'dev' ? 'development' : 'test'} split: ${corpus.length} calls, ready in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );

  // A worker separates many calls: the JIT's compilation and optimization are not the steady cost.
  if (corpus[0]) {
    const { bytes } = await stagedTrack(corpus[0]);
    for (let i = 0; i < (separator.method === 'ge2e' ? 1 : WARM_UP_SEPARATIONS); i++)
      separateVoices(stagedAudioReader([{ start: 0, bytes }]), corpus[0].spans);
  }
  const rows: Scored[] = [];
  console.log(
    `\n${'call'.padEnd(9)} ${pad('min', 5)} ${pad('utts', 5)} ${pad('voices', 6)} ${pad('acc', 7)} ${pad('DER', 7)} ${pad('null', 6)} ${pad('joined', 9)} ${pad('ms/h', 6)} ${pad('cost', 6)}  reason`,
  );
  for (const scripted of corpus) {
    // The least CPU of `passes` passes, for the media work and for the separation alike.
    let media = await stagedTrack(scripted);
    for (let p = 1; p < passes; p++) {
      const again = await stagedTrack(scripted);
      if (again.mediaSeconds < media.mediaSeconds) media = again;
    }
    const call = recognizerSpans ? withRecognizerSpans(scripted, media.bytes) : scripted;
    const reader = stagedAudioReader([{ start: 0, bytes: media.bytes }]);
    const spans = call.spans.map((s) => ({ start: s.start, end: s.end }));
    const splits: string[] = [];
    let result = separateVoices(reader, spans, {
      onSplit: (similarity, kept) => splits.push(`${similarity.toFixed(3)}${kept ? '+' : '-'}`),
      ...(values.dump ? { onEmbeddings: (e, f) => dumpEmbeddings(call, e, f) } : {}),
    });
    for (let p = 1; p < passes; p++) {
      const again = separateVoices(reader, spans);
      if (again.cpuMs < result.cpuMs) result = again;
    }
    const r = score(call, result, media.mediaSeconds * 1000, framesOf(reader, call));
    rows.push(r);
    console.log(
      `${call.id.padEnd(9)} ${pad((call.durationSeconds / 60).toFixed(1), 5)} ${pad(r.utterances, 5)} ${pad(`${result.voices}/${call.voices}`, 6)} ${pad(pct(r.correct / Math.max(1, r.assigned)), 7)} ${pad(pct(derOf(r.der)), 7)} ${pad(pct(1 - r.assigned / r.utterances), 6)} ${pad(`${r.joinedHit}/${r.joinedFound}/${r.joinedTrue}`, 9)} ${pad((result.cpuMs / (call.durationSeconds / 3600)).toFixed(0), 6)} ${pad(pct(result.cpuMs / Math.max(1e-9, r.mediaMs)), 6)}  ${result.reason ?? ''}`,
    );
    console.log(`          ${call.description}${splits.length ? ` [splits ${splits.join(' ')}]` : ''}`);
  }
  const of = (...kinds: CallKind[]) => rows.filter((r) => kinds.includes(r.call.kind));
  const twoVoice = summary(
    'Two-voice calls (speech of both synthesizers and DTMF-only)',
    of('two-voice', 'dtmf'),
  );
  summary(
    '  of which Open JTalk',
    of('two-voice').filter((r) => r.call.engine === 'openjtalk'),
  );
  summary(
    '  of which espeak-ng',
    of('two-voice').filter((r) => r.call.engine === 'espeak'),
  );
  summary(
    '  of which pure speech',
    of('two-voice').filter((r) => r.call.style === 'pure'),
  );
  summary(
    '  of which one shared line',
    of('two-voice').filter((r) => r.call.line === 'shared'),
  );
  summary('  of which DTMF only (legs differ by line only)', of('dtmf'));
  summary('One-voice calls (voicemail, announcements)', of('one-voice'));
  summary('Three-voice calls (a transfer)', of('three-voice'));
  const all = summary('Every call', rows);
  const countRight = (kind: CallKind) => {
    const calls = of(kind);
    return { right: calls.filter((r) => r.result.voices === r.call.voices).length, of: calls.length };
  };
  const counts = {
    one: countRight('one-voice'),
    two: {
      right: of('two-voice', 'dtmf').filter((r) => r.result.voices === 2).length,
      of: of('two-voice', 'dtmf').length,
    },
    three: countRight('three-voice'),
  };
  const accuracyOf = (r: Scored) => r.correct / Math.max(1, r.assigned);
  const worst = of('two-voice', 'dtmf').reduce<Scored | undefined>(
    (w, r) => (!w || accuracyOf(r) < accuracyOf(w) ? r : w),
    undefined,
  );
  console.log(
    `\nvoice counts: one-voice calls ${counts.one.right}/${counts.one.of} kept one, two-voice calls ${counts.two.right}/${counts.two.of} found two, transfers ${counts.three.right}/${counts.three.of} found three`,
  );
  if (worst)
    console.log(
      `worst two-voice call: ${worst.call.id} ${pct(accuracyOf(worst))} of its utterances right, DER ${pct(derOf(worst.der))} (${worst.call.description})`,
    );
  const verdicts = [
    ['two-voice utterance accuracy ≥ 95 %', twoVoice.accuracy >= TARGET_ACCURACY],
    ['two-voice DER ≤ 10 %', twoVoice.der <= TARGET_DER],
    ['every two-voice call ≥ 90 % of utterances right', !!worst && accuracyOf(worst) >= TARGET_CALL_ACCURACY],
    ['cost ≤ 10 % of the media work', all.cost <= TARGET_COST],
    // A voice too many is a false split: one-voice calls stay one, two-voice calls two.
    ['one-voice calls kept one', counts.one.right === counts.one.of],
    ['two-voice calls found two', counts.two.right === counts.two.of],
    ['transfers found in ≥ 5 of 6', counts.three.right >= Math.ceil((5 / 6) * counts.three.of)],
  ] as const;
  for (const [what, ok] of verdicts) console.log(`${split}: ${ok ? 'met' : 'MISSED'}: ${what}`);
  return { verdicts: [...verdicts] };
}

async function main(): Promise<void> {
  console.log(
    `separator: ${separator.method === 'ge2e' ? 'the GE2E speaker-embedding model' : 'the voice-feature method'}${separator.note ? ` (${separator.note})` : ''}`,
  );
  console.log(
    `cost: the least CPU of ${passes} passes per call, for the separation and for its channel analysis and track alike`,
  );
  console.log(
    `spans: ${recognizerSpans ? "the recognizer's: the emulator's segments of each staged track" : "the script's lines, overlapping ones merged"}`,
  );
  const splits: Split[] =
    values.split === 'dev' ? ['dev'] : values.split === 'test' ? ['test'] : ['dev', 'test'];
  let testMet = true;
  for (const split of splits) {
    const { verdicts } = await runSplit(split);
    // The development split is for tuning: only the test split decides.
    if (split === 'test') testMet = !values.only && verdicts.every(([, ok]) => ok);
  }
  process.exitCode = testMet ? 0 : 1;
}

await main();
