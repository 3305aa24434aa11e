/**
 * Two voices told apart by the voice itself, on the shared test stack (real Temporal, S3, ffmpeg and
 * emulator): a mono call of pure speech, no DTMF (the emulator finds the utterances itself), spoken by
 * Open JTalk's HTS voice as a woman and as a man (9 semitones lower, formants ×0.84: a vocal tract about
 * 19 % longer) through one shared telephone line, comes out as two voices with each utterance given the
 * voice that spoke it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { outputLocation, resolveSource, submitRecording } from '../../cli/submit.ts';
import { mixLegs, TELEPHONE_PATHS } from '../../activities/media/telephone-path.ts';
import { resultDocumentSchema } from '../../schemas/result.ts';
import { SPEECH_RATE, SpeechSynth, type SynthVoice } from '../../bench/lib/speech-synth.ts';
import { utteranceMatches } from '../../bench/lib/diarization-score.ts';
import { stackConfig } from '../helpers/stack.ts';
import { wavFile } from '../helpers/dtmf-audio.ts';

/** The per-utterance speaker accuracy the speakers benchmark holds the separation to (bench/README.md). */
const SPEAKER_ACCURACY = 0.95;

const WOMAN: SynthVoice = { engine: 'openjtalk', halfTone: 0, formant: 1, speed: 1 };
const MAN: SynthVoice = { engine: 'openjtalk', halfTone: -9, formant: 0.84, speed: 0.95 };

/** Agent (the woman) and customer (the man) in turn. */
const LINES: [0 | 1, string][] = [
  [0, 'お電話ありがとうございます。カスタマーセンターの山田でございます。'],
  [1, 'あの、請求書のことでちょっと聞きたいんですけど。'],
  [0, 'かしこまりました。ご契約の番号を教えていただけますか。'],
  [1, '番号はちょっと今手元にないんです。'],
  [0, 'それでは、お名前と生年月日をお願いいたします。'],
  [1, '佐藤花子です。'],
  [0, '確認いたしますので、少々お待ちいただけますでしょうか。'],
  [1, 'はい、お願いします。'],
  [0, '大変お待たせいたしました。先月から料金プランが変わっております。'],
  [1, 'ああ、そうなんですね。それは聞いてないですね。'],
  [0, 'ご不便をおかけして申し訳ございません。'],
  [1, '元のプランに戻すことはできますか。'],
  [0, 'はい、来月から元のプランに戻すことができます。'],
  [1, 'じゃあ、それでお願いします。'],
  [0, 'ほかにご不明な点はございますでしょうか。'],
  [1, 'いえ、大丈夫です。ありがとうございました。'],
];

/** Seconds of silence between turns: longer than the emulator's pause between segments. */
const GAP_SECONDS = 1.2;
const LEVEL = 0.1;

describe('two voices told apart by the voice', () => {
  let dir: string;
  let pc: PipelineClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'callpipe-voices-'));
    pc = await connectPipeline(stackConfig());
  });

  afterAll(async () => {
    await pc?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a pure-speech mono call of a woman and a man comes out as two voices, utterance by utterance', async () => {
    const synth = new SpeechSynth(join(dir, 'speech'));
    const turns: { speaker: number; start: number; end: number; audio: Float32Array }[] = [];
    let t = 0.8;
    try {
      for (const [speaker, text] of LINES) {
        const audio = await synth.say(speaker === 0 ? WOMAN : MAN, text);
        let energy = 0;
        for (const x of audio) energy += x * x;
        const gain = LEVEL / Math.sqrt(energy / audio.length);
        turns.push({
          speaker,
          start: t,
          end: t + audio.length / SPEECH_RATE,
          audio: audio.map((x) => x * gain),
        });
        t += audio.length / SPEECH_RATE + GAP_SECONDS;
      }
    } finally {
      synth.close();
    }
    const mix = new Float32Array(Math.ceil((t + 1) * SPEECH_RATE));
    for (const turn of turns) mix.set(turn.audio, Math.round(turn.start * SPEECH_RATE));
    const speech = join(dir, 'speech.wav');
    await writeFile(speech, wavFile([mix], SPEECH_RATE));
    // Both voices through one line, as a PBX records a call.
    const path = join(dir, 'woman-and-man.wav');
    await mixLegs([{ input: speech, path: TELEPHONE_PATHS.landline }], path);

    const source = await resolveSource(path, pc.store, pc.config);
    const submitted = await submitRecording(pc, source, {
      output: outputLocation(undefined, pc.config),
      redo: true,
    });
    const r = await submitted.handle.result();
    expect(r.status, r.reason).toBe('done');
    const doc = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(r.resultKey!)));

    expect(doc.speakerRoles).toMatchObject({ source: 'voices' });
    expect(doc.speakerRoles!.separation).toMatchObject({ voices: 2 });
    // Each utterance's true speaker: the turn it overlaps most.
    const truth = doc.utterances.map((u) => {
      const overlap = turns.map((turn) =>
        Math.max(0, Math.min(u.end, turn.end) - Math.max(u.start, turn.start)),
      );
      return turns[overlap.indexOf(Math.max(...overlap))]!.speaker;
    });
    const speakers = [...new Set(doc.utterances.map((u) => u.speaker))];
    const { correct } = utteranceMatches(
      truth,
      doc.utterances.map((u) => speakers.indexOf(u.speaker)),
    );
    const accuracy = correct / doc.utterances.length;
    console.log(`pure-speech woman and man: ${correct}/${doc.utterances.length} utterances with their voice`);
    // The recognizer's segments are the turns, about one each.
    expect(doc.utterances.length).toBeGreaterThanOrEqual(LINES.length * 0.8);
    expect(accuracy).toBeGreaterThanOrEqual(SPEAKER_ACCURACY);
  });
});
