/**
 * The redacted copy of a recording, with real ffmpeg: a stereo recording of two distinct sines (and a
 * little noise) masked over two spans, decoded back and compared sample for sample with the recording.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaError } from '../../activities/media/errors.ts';
import { plainInput } from '../../activities/media/media-input.ts';
import {
  checkRedactedCopy,
  toneSample,
  writeRedactedAudio,
  type AudioMask,
} from '../../activities/media/redacted-audio.ts';
import { mapRedactionSpans, type FrameSpan } from '../../activities/media/redaction-spans.ts';
import { REDACTED_AUDIO_TONE_HZ, REDACTED_AUDIO_TONE_PEAK } from '../../schemas/limits.ts';
import { seededRandom } from '../../schemas/seeded-random.ts';
import { wavFile } from '../helpers/dtmf-audio.ts';
import { makeTempDir } from '../helpers/media-fixtures.ts';
import { channelSlice, decodeInterleaved, toneShare } from '../helpers/redacted-audio.ts';

const tmp = makeTempDir('callpipe-redacted-audio-');
afterAll(() => tmp.cleanup());

const RATE = 16000;
const SECONDS = 4;
const FRAMES = RATE * SECONDS;
let source: string;
let original: Int16Array;

beforeAll(async () => {
  const random = seededRandom(15);
  const left = new Float32Array(FRAMES);
  const right = new Float32Array(FRAMES);
  for (let i = 0; i < FRAMES; i++) {
    left[i] = 0.3 * Math.sin((2 * Math.PI * 440 * i) / RATE) + 0.01 * (random() - 0.5);
    right[i] = 0.3 * Math.sin((2 * Math.PI * 300 * i) / RATE) + 0.01 * (random() - 0.5);
  }
  source = join(tmp.dir, 'call.wav');
  writeFileSync(source, wavFile([left, right], RATE));
  original = await decodeInterleaved(source);
});

function spans(utterances: { start: number; end: number }[]): FrameSpan[] {
  const m = mapRedactionSpans(
    utterances.map((u, index) => ({ index, ...u })),
    RATE,
  );
  if (!m.ok) throw new Error(m.reason);
  return m.spans;
}

async function redact(mask: AudioMask, over: FrameSpan[], name = `${mask}.flac`) {
  const outPath = join(tmp.dir, name);
  const made = await writeRedactedAudio({
    input: plainInput(source, undefined),
    sampleRate: RATE,
    channels: 2,
    spans: over,
    mask,
    outPath,
  });
  return { made, outPath };
}

describe('writeRedactedAudio', () => {
  const utterances = [
    { start: 0.5, end: 1.2 },
    { start: 2.5, end: 3.25 },
  ];

  it('puts the tone over every span on every channel, and leaves every other sample as it was', async () => {
    const over = spans(utterances);
    const { made, outPath } = await redact('tone', over);
    expect(made).toEqual({ ok: true, frames: FRAMES, spans: over, maskedSeconds: 0.9 + 0.95 });
    const copy = await decodeInterleaved(outPath);
    expect(copy.length).toBe(original.length);
    let inside = 0;
    let outside = 0;
    const wrong: string[] = [];
    for (let frame = 0; frame < FRAMES; frame++) {
      const span = over.find((s) => frame >= s.from && frame < s.to);
      for (let ch = 0; ch < 2; ch++) {
        const i = frame * 2 + ch;
        const want = span ? toneSample(frame - span.from, RATE) : original[i];
        if (copy[i] !== want) wrong.push(`frame ${frame} channel ${ch}: ${copy[i]}, not ${want}`);
        if (span) inside += 1;
        else outside += 1;
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(inside).toBe(2 * Math.round(1.85 * RATE));
    expect(outside).toBeGreaterThan(inside);
    // Measured as any listener's tool would: a 1-kHz tone at its level over the spans, the voices elsewhere.
    for (const s of over) {
      for (let ch = 0; ch < 2; ch++) {
        const { share, rms } = toneShare(
          channelSlice(copy, 2, ch, s.from, s.to),
          RATE,
          REDACTED_AUDIO_TONE_HZ,
        );
        expect(share).toBeGreaterThan(0.98);
        expect(rms).toBeCloseTo(REDACTED_AUDIO_TONE_PEAK / Math.SQRT2, 2);
      }
    }
    expect(
      toneShare(channelSlice(copy, 2, 0, 0, over[0]!.from), RATE, REDACTED_AUDIO_TONE_HZ).share,
    ).toBeLessThan(0.01);
  });

  it('or silence, when asked', async () => {
    const over = spans(utterances);
    const { made, outPath } = await redact('silence', over);
    expect(made.ok).toBe(true);
    const copy = await decodeInterleaved(outPath);
    for (const s of over) {
      expect(channelSlice(copy, 2, 0, s.from, s.to).every((v) => v === 0)).toBe(true);
      expect(channelSlice(copy, 2, 1, s.from, s.to).every((v) => v === 0)).toBe(true);
    }
    expect(copy[over[0]!.from * 2 - 2]).toBe(original[over[0]!.from * 2 - 2]);
  });

  it('with no spans, the copy is the recording', async () => {
    const { made, outPath } = await redact('tone', [], 'none.flac');
    expect(made).toMatchObject({ ok: true, frames: FRAMES, spans: [], maskedSeconds: 0 });
    expect(
      Buffer.compare(Buffer.from((await decodeInterleaved(outPath)).buffer), Buffer.from(original.buffer)),
    ).toBe(0);
  });

  it('a span beyond the audio: no copy, and the reason', async () => {
    const { made } = await redact('tone', spans([...utterances, { start: 5, end: 6 }]), 'beyond.flac');
    expect(made).toEqual({
      ok: false,
      reason:
        'redacted span 3 (4.90 s–6.00 s) lies beyond the audio (4.00 s): the recognized times do not fit this recording',
    });
  });
});

describe('checkRedactedCopy', () => {
  it('finds a copy whose spans carry no tone, or whose length is not the recording’s', async () => {
    const { made, outPath } = await redact('tone', [], 'unmasked.flac');
    expect(made.ok).toBe(true);
    const over = spans([{ start: 1, end: 2 }]);
    const problems = await checkRedactedCopy({ outPath, channels: 2, sampleRate: RATE, mask: 'tone' }, over, {
      frames: FRAMES + 1,
      outside: 'not the hash',
    });
    expect(problems).toEqual([
      `the copy is ${FRAMES} sample frames long, the recording ${FRAMES + 1}`,
      expect.stringMatching(/^span 1 \(0\.90–2\.10 s\) on channel 1 has [0-9] % of its energy in the tone$/),
      expect.stringMatching(/^span 1 \(0\.90–2\.10 s\) on channel 2 has [0-9] % of its energy in the tone$/),
      'the copy differs from the recording outside the redacted spans',
    ]);
    const silent = await checkRedactedCopy(
      { outPath, channels: 2, sampleRate: RATE, mask: 'silence' },
      over,
      {
        frames: FRAMES,
        outside: 'x',
      },
    );
    expect(silent[0]).toMatch(/^span 1 \(0\.90–2\.10 s\) on channel 1 is not silent \(peak -10\.\d dBFS\)$/);
    expect(existsSync(outPath)).toBe(true);
  });
});

describe('the redacted copy of a recording that never ends', () => {
  it('fails with a timed-out reason once past its bound, instead of holding the media slot', async () => {
    // A pipe no one writes to, read as headerless mu-law: the decode waits for ever.
    const path = join(tmp.dir, 'stalled.ulaw');
    execFileSync('mkfifo', [path]);
    const err = await writeRedactedAudio({
      input: plainInput(path, { format: 'mulaw', options: {}, repair: null }),
      sampleRate: 8000,
      channels: 1,
      spans: [],
      mask: 'tone',
      outPath: join(tmp.dir, 'stalled.flac'),
      bound: {
        path,
        sizeBytes: 0,
        audioSeconds: 60,
        timeBounds: { floorSeconds: 0.5, secondsPerAudioHour: 0, secondsPerMebibyte: 0 },
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MediaError);
    expect((err as MediaError).kind).toBe('timed-out');
    expect((err as MediaError).message).toMatch(
      /^.*stalled\.ulaw: the redacted copy got no answer within 1 s/,
    );
  });
});
